import type { AddressInfo } from "node:net";
import { createServer, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServerRuntime } from "../../../local/server-runtime";
import { exampleSecrets, wranglerVars } from "../../../local/worker-runtime";
import { type AppUnderTest, serverTestVars, startApp, testRuntime } from "../../support/app";

/**
 * SIGTERM while a QStash publish hangs (a QStash that takes the connection and never answers): the
 * process still exits, within SHUTDOWN_DRAIN_MS or as soon as the publish times out, and the order it
 * could not hand over stays in the outbox, from where the sweeper writes it once QStash answers again.
 */
const runtime = testRuntime();

/** A "QStash" that accepts connections and reads requests but never answers one. */
async function silentQStash(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on("data", () => {});
    socket.on("error", () => {});
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** Buys one unit, sends SIGTERM once the publish is under way; resolves the order id and the exit time. */
async function buyThenTerminate(
  app: AppUnderTest,
): Promise<{ orderId: string; saleId: string; exitMs: number }> {
  const sale = await app.api.createSale({ stock: 5 });
  const buy = await app.api.buy(sale.productToken, "sigterm", 1);
  expect(buy.status).toBe(202);
  await new Promise((r) => setTimeout(r, 200)); // the batch window (5 ms) has passed: the publish hangs
  const engine = app.worker as ServerRuntime;
  const started = Date.now();
  engine.child.kill("SIGTERM");
  const code = await Promise.race([
    engine.exited,
    new Promise((r) => setTimeout(() => r("running"), 20_000)),
  ]);
  expect(code).toBe(0);
  return {
    orderId: (buy.body as { orderId: string }).orderId,
    saleId: sale.saleId,
    exitMs: Date.now() - started,
  };
}

describe(`on ${runtime}: SIGTERM while a QStash publish never returns`, () => {
  let qstash: Awaited<ReturnType<typeof silentQStash>>;
  beforeAll(async () => {
    qstash = await silentQStash();
  });
  afterAll(async () => {
    await qstash?.close();
  });

  it("exits within SHUTDOWN_DRAIN_MS; the order stays in the outbox and the sweeper writes it once QStash answers", async () => {
    const settings = { QSTASH_URL: qstash.url, SHUTDOWN_DRAIN_MS: "1500", OUTBOX_GRACE_SECONDS: "1" };
    // restarted below on the stack's one server (serverTestVars): whatever the suite's layout
    const app = await startApp({ vars: settings, oneServer: true });
    try {
      const { orderId, saleId, exitMs } = await buyThenTerminate(app);
      expect(exitMs).toBeLessThan(3_500);
      expect(await app.redis.zscore(`sale:{s:${saleId}}:outbox`, orderId)).not.toBeNull();

      // the same deployment restarted with a QStash that answers: the cron's sweep hands the order over
      const engine = app.worker as ServerRuntime;
      const vars = {
        ...wranglerVars(),
        ...exampleSecrets(),
        ...app.stack.vars,
        ...serverTestVars(app.stack),
      };
      await engine.setVars({ ...vars, OUTBOX_GRACE_SECONDS: "1" });
      await engine.scheduled();
      await app.drain();
      const { rows } = await app.db.query("select status from orders where id = $1", [orderId]);
      expect(rows).toEqual([{ status: "awaiting_payment" }]);
      expect(await app.redis.zscore(`sale:{s:${saleId}}:outbox`, orderId)).toBeNull();
    } finally {
      await app.stop();
    }
  });

  it("exits once the hanging publish times out (5 s), well within the default drain deadline", async () => {
    const app = await startApp({ vars: { QSTASH_URL: qstash.url } });
    try {
      const { orderId, saleId, exitMs } = await buyThenTerminate(app);
      expect(exitMs).toBeGreaterThan(3_000);
      expect(exitMs).toBeLessThan(8_000);
      expect(await app.redis.zscore(`sale:{s:${saleId}}:outbox`, orderId)).not.toBeNull();
    } finally {
      await app.stop();
    }
  });
});

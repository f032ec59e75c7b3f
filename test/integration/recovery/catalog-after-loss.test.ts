import { describe, expect, it } from "vitest";
import { startServer } from "../../../local/server-runtime";
import { exampleSecrets, startWorker, type WorkerRuntime, wranglerVars } from "../../../local/worker-runtime";
import { catalogKeys, saleKeys } from "../../../src/stock/keys";
import { type ApiResponse, apiClient } from "../../support/api";
import { serverTestVars } from "../../support/app";
import { appForFile } from "../../support/app-per-file";

/**
 * Right after Redis loses its data, a process still holds the catalog it loaded before. A real sale's
 * token must never be answered 404 UNKNOWN_PRODUCT then: the sale is being restored, which the contract
 * answers 503 UNAVAILABLE with Retry-After, until it sells again. CATALOG_REFRESH_MS is long here, so
 * the process's own catalog check (which would notice the loss) does not come in between.
 */
const app = appForFile({
  // Redis paused, restarted or flushed here: the stack's one server, whatever the suite's layout
  oneServer: true,
  vars: {
    RATE_LIMIT_USER_PER_WINDOW: "1000",
    RECOVERY_QUIET_SECONDS: "2",
    CATALOG_REFRESH_MS: "60000",
  },
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const code = (res: ApiResponse) => (res.body as { error?: { code?: string } }).error?.code;

/** Buys `token` (a new shopper each time) until it is 202, answering every reply seen on the way. */
async function untilSold(token: string, tag: string, api = app.api): Promise<ApiResponse[]> {
  const seen: ApiResponse[] = [];
  for (let i = 0; i < 200; i++) {
    const res = await api.buy(token, `${tag}-${i}`, 1);
    seen.push(res);
    if (res.status === 202) return seen;
    if (i % 10 === 9) await app.worker.scheduled().catch(() => {}); // the minute's cron, sooner
    await sleep(150);
  }
  return seen;
}

function expectNeverUnknown(seen: ApiResponse[]) {
  const answers = seen.map((r) => `${r.status} ${code(r) ?? ""}`.trim());
  expect(
    answers.filter((a) => a.startsWith("404")),
    answers.join(", "),
  ).toEqual([]);
  const unavailable = seen.filter((r) => r.status === 503);
  expect(unavailable.length, answers.join(", ")).toBeGreaterThan(0);
  for (const r of unavailable) {
    expect(code(r)).toBe("UNAVAILABLE");
    expect(Number(r.headers.get("Retry-After"))).toBeGreaterThanOrEqual(1);
  }
  expect(seen.at(-1)?.status, answers.join(", ")).toBe(202);
}

/** A second engine on the same stores (another isolate or process), with its own memory. */
async function secondEngine(): Promise<WorkerRuntime> {
  const vars = {
    ...wranglerVars(),
    ...exampleSecrets(),
    ...app.stack.vars,
    RATE_LIMIT_USER_PER_WINDOW: "1000",
    RECOVERY_QUIET_SECONDS: "2",
    CATALOG_REFRESH_MS: "60000",
  };
  return app.runtime === "workers"
    ? startWorker({ vars })
    : startServer({ runtime: app.runtime, vars: { ...vars, ...serverTestVars(app.stack) } });
}

describe("a real sale's token right after a Redis loss", () => {
  it("a catalog too large to hold exactly (its lookups): 503 while the sale is lost and restored, never 404", async () => {
    // more tokens than a process keeps exactly: its catalog is the Bloom filter, a token looked up in Redis
    const filler: Record<string, string> = {};
    for (let i = 0; i < 20_001; i++) filler[`filler-${String(i).padStart(36, "0")}`] = "s000000000000";
    await app.redis.hset(catalogKeys.tokens, filler);
    const sale = await app.api.createSale({ stock: 50, perUserLimit: 1 });
    const other = await app.api.createSale({ stock: 50, perUserLimit: 1 });
    expect((await app.api.buy(other.productToken, "bloom-warm", 1)).status).toBe(202);

    await app.stack.redis.restart({ empty: true });
    await app.reconnect();
    expectNeverUnknown(await untilSold(sale.productToken, "bloom"));
    expect(await app.redis.hget(saleKeys(sale.saleId).meta, "epoch")).not.toBeNull();
  });

  it("a sale another process created, which this one's catalog does not hold yet: 503, never 404", async () => {
    const known = await app.api.createSale({ stock: 50, perUserLimit: 1 });
    expect((await app.api.buy(known.productToken, "exact-warm", 1)).status).toBe(202);
    const other = await secondEngine();
    try {
      const created = await apiClient(other.url).createSale({ stock: 50, perUserLimit: 1 });
      await app.stack.redis.restart({ empty: true });
      await app.reconnect();
      // this process learns of the loss from a sale it knows, then meets the one it does not
      const lost = await app.api.buy(known.productToken, "exact-lost", 1);
      expect([lost.status, code(lost)]).toEqual([503, "UNAVAILABLE"]);
      expectNeverUnknown(await untilSold(created.productToken, "exact"));
    } finally {
      await other.stop();
    }
  });
});

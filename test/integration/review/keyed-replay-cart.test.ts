import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { saleKeys } from "../../../src/stock/keys";
import { appForFile } from "../../support/app-per-file";
import { shopperToken } from "../../support/shopper";
import { createDrop } from "../../support/variants";

/*
 * A keyed replay whose order is still in the outbox publishes the order again (its first publish may have
 * been lost). It publishes the replay's own cart, not the reservation's: the same Idempotency-Key with
 * another body (a cheaper variant, as many units) writes the order with the cheaper lines and amount,
 * while Redis counted the dearer variant. Here the first publish fails (QStash answers 500).
 */
/** Stands between the engine and QStash; fails the first publish that carries the dearer variant. */
let target = "";
let failed = 0;
const proxy = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", async () => {
    const body = Buffer.concat(chunks);
    if (failed === 0 && body.toString().includes("gold")) {
      failed++;
      res.writeHead(500, { "Content-Type": "application/json" }).end('{"error":"unavailable"}');
      return;
    }
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(
        ([k, v]) => typeof v === "string" && !["host", "content-length", "connection"].includes(k),
      ),
    ) as Record<string, string>;
    const upstream = await fetch(`${target}${req.url}`, {
      method: req.method,
      headers,
      ...(req.method === "GET" || req.method === "HEAD" ? {} : { body }),
    });
    const out = Buffer.from(await upstream.arrayBuffer());
    res.writeHead(upstream.status, {
      "Content-Type": upstream.headers.get("content-type") ?? "application/json",
    });
    res.end(out);
  });
});
await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", () => r()));
const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
afterAll(() => new Promise<void>((r) => proxy.close(() => r())));

const app = appForFile({
  vars: { RATE_LIMIT_USER_PER_WINDOW: "1000", RATE_LIMIT_IP_PER_WINDOW: "100000", QSTASH_URL: proxyUrl },
});

async function buy(token: string, userId: string, body: unknown, key: string) {
  return app.api.call("POST", `/api/buy/${token}`, {
    token: await shopperToken(userId),
    body,
    headers: { "Idempotency-Key": key },
  });
}

describe("a keyed replay of a drop's buy with another cart", () => {
  it("writes the order with the lines Redis reserved, not the replay's", async () => {
    const sale = await createDrop(
      app,
      [
        { variantId: "gold", name: "Gold", priceCents: 50_000, stock: 5 },
        { variantId: "tin", name: "Tin", priceCents: 100, stock: 5 },
      ],
      { perUserLimit: 5 },
    );
    target = app.stack.vars.QSTASH_URL;
    const first = await buy(sale.productToken, "swapper", { variantId: "gold", quantity: 2 }, "k-swap");
    expect(first.status).toBe(202);
    const orderId = String(first.body.orderId);
    await app.drain();
    // the write was lost: the order is still in the outbox
    expect(await app.redis.zscore(saleKeys(sale.saleId).outbox, orderId)).not.toBeNull();
    const again = await buy(sale.productToken, "swapper", { variantId: "tin", quantity: 2 }, "k-swap");
    expect([again.status, again.body.orderId]).toEqual([202, orderId]);
    await app.drain();
    const { rows } = await app.db.query(
      "select items, amount_cents::int as amount_cents from orders where id = $1",
      [orderId],
    );
    expect(rows[0]).toEqual({
      items: [{ variantId: "gold", name: "Gold", quantity: 2, priceCents: 50_000 }],
      amount_cents: 100_000,
    });
    // Redis counted gold
    expect(await app.redis.hgetall(saleKeys(sale.saleId).variantStock)).toEqual({ gold: "3", tin: "5" });
  });
});

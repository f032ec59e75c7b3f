import { beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../../../local/ports";
import { saleKeys } from "../../../src/stock/keys";
import type { ApiClient, ApiResponse } from "../../support/api";
import { appForFile } from "../../support/app-per-file";
import { shopperToken } from "../../support/shopper";
import { createDrop } from "../../support/variants";

/**
 * One unit per shopper across a drop, with the engine scaled out: three processes of the same runtime
 * (three workerd, Deno or Bun processes, each with its own memory) over one Redis, one Postgres and one
 * QStash. A shopper's buys of different sizes, and carts of two, arrive at once at all three; whatever
 * process answers, the shopper ends up holding one unit, in Redis and in Postgres alike.
 */
const app = appForFile({
  vars: { RATE_LIMIT_USER_PER_WINDOW: "1000", RATE_LIMIT_IP_PER_WINDOW: "100000", CATALOG_REFRESH_MS: "500" },
});

const SIZES = ["EU38", "EU39", "EU40", "EU41", "EU42", "EU43"];
const STOCK = 40;
const ROUNDS = 3;
const SHOPPERS_PER_ROUND = 6;
/** Carts of two sizes each racing shopper sends besides one buy per size. */
const CARTS: [string, string][] = [
  ["EU38", "EU41"],
  ["EU40", "EU43"],
];

type Attempt = { userId: string; lines: string[]; engine: number; key: string };
type Answer = Attempt & { status: number; code: string | undefined; orderId: string | undefined };

let engines: ApiClient[] = [];

beforeAll(async () => {
  const others = await Promise.all([app.startEngine(), app.startEngine()]);
  engines = [app.api, ...others.map((o) => o.api)];
});

/** A live drop of the six sizes, `STOCK` each, one unit per shopper, known to every process. */
async function drop(): Promise<{ saleId: string; productToken: string }> {
  const sale = await createDrop(
    app,
    SIZES.map((variantId) => ({ variantId, stock: STOCK })),
    { perUserLimit: 1 },
  );
  const probe = await shopperToken("probe");
  // an unknown variant is answered 400 once the process knows the token (404 before): no stock is touched
  for (const api of engines)
    await waitFor(
      async () =>
        (
          await api.call("POST", `/api/buy/${sale.productToken}`, {
            token: probe,
            body: { variantId: "none", quantity: 1 },
          })
        ).status === 400,
      { timeoutMs: 10_000, what: "every process to know the drop" },
    );
  return sale;
}

/** Sends every attempt at once, each to its process with its own Idempotency-Key. */
async function fire(productToken: string, attempts: Attempt[]): Promise<Answer[]> {
  const tokens = new Map<string, string>();
  for (const a of attempts) if (!tokens.has(a.userId)) tokens.set(a.userId, await shopperToken(a.userId));
  const body = (lines: string[]) =>
    lines.length === 1
      ? { variantId: lines[0], quantity: 1 }
      : { items: lines.map((variantId) => ({ variantId, quantity: 1 })) };
  const answers = await Promise.all(
    attempts.map((a) =>
      (engines[a.engine] as ApiClient).call("POST", `/api/buy/${productToken}`, {
        token: tokens.get(a.userId) as string,
        body: body(a.lines),
        headers: { "Idempotency-Key": a.key },
      }),
    ),
  );
  return attempts.map((a, i) => answerOf(a, answers[i] as ApiResponse));
}

function answerOf(a: Attempt, res: ApiResponse): Answer {
  const body = res.body as { orderId?: string; error?: { code?: string } };
  return { ...a, status: res.status, code: body.error?.code, orderId: body.orderId };
}

/** Round `r`: each new shopper buys every size and two carts, spread over the processes and shuffled. */
function racers(r: number): Attempt[] {
  const tries = [...SIZES.map((size) => [size]), ...CARTS];
  return Array.from({ length: SHOPPERS_PER_ROUND }, (_, s) => `racer-${r}-${s}`)
    .flatMap((userId, s) =>
      tries.map((lines, k) => ({ userId, lines, engine: (s + k) % engines.length, key: `${userId}-${k}` })),
    )
    .sort(() => Math.random() - 0.5);
}

/** What Redis holds of the drop: units left per size, and units held per shopper and per shopper's size. */
async function redisView(saleId: string) {
  const keys = saleKeys(saleId);
  const [stock, vstock, holdings, vholdings] = await Promise.all([
    app.redis.get(keys.stock),
    app.redis.hgetall(keys.variantStock),
    app.redis.hgetall(keys.holdings),
    app.redis.hgetall(keys.variantHoldings),
  ]);
  return { stock: Number(stock), vstock, holdings, vholdings };
}

/** The Redis view a drop should have when `held` says which size each shopper holds (one unit each). */
function expectedView(held: Map<string, string>) {
  const sold = (size: string) => [...held.values()].filter((v) => v === size).length;
  return {
    stock: SIZES.length * STOCK - held.size,
    vstock: Object.fromEntries(SIZES.map((size) => [size, String(STOCK - sold(size))])),
    holdings: Object.fromEntries([...held.keys()].map((userId) => [userId, "1"])),
    vholdings: Object.fromEntries([...held].map(([userId, size]) => [`${size}:${userId}`, "1"])),
  };
}

describe("one unit per shopper across a drop, on three processes", () => {
  it("gives each shopper one size whatever arrives at once at which process, in Redis and Postgres", async () => {
    const sale = await drop();
    const held = new Map<string, string>();
    const orders = new Map<string, string>();
    for (let r = 0; r < ROUNDS; r++) {
      // the holders of earlier rounds come back for another size, at every process
      const again = [...held].map(([userId, size], i) => ({
        userId,
        lines: [SIZES[(SIZES.indexOf(size) + 1 + r) % SIZES.length] as string],
        engine: i % engines.length,
        key: `${userId}-again-${r}`,
      }));
      const answers = await fire(sale.productToken, [...racers(r), ...again]);
      const won = answers.filter((a) => a.status === 202);
      const shoppers = [...new Set(answers.map((a) => a.userId))].filter((u) => !held.has(u));
      expect(won.map((a) => a.userId).sort()).toEqual(shoppers.sort());
      // a single size refused: ALREADY_PURCHASED; a cart of two: LIMIT_EXCEEDED, or ALREADY_PURCHASED once one is held
      const refusedWrongly = answers.filter(
        (a) =>
          a.status !== 202 &&
          !(
            a.status === 409 &&
            (a.code === "ALREADY_PURCHASED" || (a.lines.length === 2 && a.code === "LIMIT_EXCEEDED"))
          ),
      );
      expect(refusedWrongly).toEqual([]);
      expect(won.filter((a) => a.lines.length !== 1)).toEqual([]);
      for (const a of won) {
        held.set(a.userId, a.lines[0] as string);
        orders.set(a.userId, a.orderId as string);
      }
      expect(await redisView(sale.saleId)).toEqual(expectedView(held));
    }

    await app.drain();
    expect(await redisView(sale.saleId)).toEqual(expectedView(held));
    const { rows } = await app.db.query<{
      id: string;
      user_id: string;
      quantity: number;
      status: string;
      items: { variantId: string; quantity: number }[];
    }>("select id, user_id, quantity, status, items from orders where sale_id = $1", [sale.saleId]);
    const byUser = (a: unknown[], b: unknown[]) => (String(a[0]) < String(b[0]) ? -1 : 1);
    expect(
      rows
        .map((o) => [o.user_id, o.id, o.quantity, o.status, o.items.map((i) => [i.variantId, i.quantity])])
        .sort(byUser),
    ).toEqual(
      [...held]
        .map(([userId, size]) => [userId, orders.get(userId), 1, "awaiting_payment", [[size, 1]]])
        .sort(byUser),
    );
    // per size, the stock is what is left plus the units in live orders
    const stock = await app.db.query<{ variant_id: string; stock: number }>(
      "select variant_id, initial_stock + stock_adjustments as stock from sale_variants where sale_id = $1",
      [sale.saleId],
    );
    const left = (await redisView(sale.saleId)).vstock;
    const live = (size: string) =>
      rows
        .flatMap((o) => o.items)
        .filter((i) => i.variantId === size)
        .reduce((t, i) => t + i.quantity, 0);
    expect(Object.fromEntries(stock.rows.map((v) => [v.variant_id, v.stock]))).toEqual(
      Object.fromEntries(SIZES.map((size) => [size, Number(left[size]) + live(size)])),
    );
    const stats = (await app.api.stats(sale.saleId)).body as { invariantHolds: boolean; liveUnits: number };
    expect([stats.invariantHolds, stats.liveUnits]).toEqual([true, held.size]);
  });

  it("refuses a fresh shopper's cart of two sizes whole at every process, and reserves nothing", async () => {
    const sale = await drop();
    const carts = engines.map((_, engine) => ({
      userId: "two-sizes",
      lines: CARTS[engine % CARTS.length] as string[],
      engine,
      key: `two-sizes-${engine}`,
    }));
    const answers = await fire(sale.productToken, carts);
    expect(answers.map((a) => [a.status, a.code])).toEqual(carts.map(() => [409, "LIMIT_EXCEEDED"]));
    expect(await redisView(sale.saleId)).toEqual(expectedView(new Map()));
    // nothing was held for them: one size still sells to the same shopper
    const [one] = await fire(sale.productToken, [
      { userId: "two-sizes", lines: ["EU42"], engine: 1, key: "one" },
    ]);
    expect(one?.status).toBe(202);
    expect(await redisView(sale.saleId)).toEqual(expectedView(new Map([["two-sizes", "EU42"]])));
    await app.drain();
    const { rows } = await app.db.query("select user_id, quantity from orders where sale_id = $1", [
      sale.saleId,
    ]);
    expect(rows).toEqual([{ user_id: "two-sizes", quantity: 1 }]);
  });
});

import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type StallProxy, startStallProxy } from "../../../local/stall-proxy";
import type { ApiResponse } from "../../support/api";
import { type AppUnderTest, startApp, testRuntime } from "../../support/app";

/**
 * The server's TCP stores behind proxies that go silent: connections stay open, bytes vanish, nothing is
 * ever closed (a peer gone behind a load balancer or NAT that keeps the client's side alive). A silent
 * connection must be found dead and replaced within seconds, and every request must get its answer
 * meanwhile: a buy 503 within its resolve window (nothing reserved), an order read 503.
 */
const runtime = testRuntime();

/** The answer, or a failed test once `ms` pass without one. */
async function within<T>(ms: number, what: string, answer: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([answer, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Polls `attempt` until it succeeds; resolves the milliseconds it took, or fails after `ms`. */
async function recoversWithin(ms: number, what: string, attempt: () => Promise<boolean>): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < ms) {
    if (await attempt().catch(() => false)) return Date.now() - started;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${what}: not recovered within ${ms} ms`);
}

const code = (res: ApiResponse) => (res.body as { error?: { code?: string } }).error?.code;

describe(`on ${runtime}: Redis and Postgres connections that go silent`, () => {
  let app: AppUnderTest;
  let redisProxy: StallProxy;
  let pgProxy: StallProxy;

  beforeAll(async () => {
    app = await startApp({
      vars: { RATE_LIMIT_USER_PER_WINDOW: "1000" },
      async beforeEngine(stack) {
        redisProxy = await startStallProxy({ target: stack.redis.url });
        pgProxy = await startStallProxy({ target: stack.vars.DATABASE_URL });
        return {
          REDIS_URL: redisProxy.via(stack.redis.url),
          DATABASE_URL: pgProxy.via(stack.vars.DATABASE_URL),
        };
      },
    });
  });
  afterEach(() => {
    // a failed test must not leave the next one a silent store
    redisProxy?.resume();
    pgProxy?.resume();
  });
  afterAll(async () => {
    await app?.stop();
    await redisProxy?.close();
    await pgProxy?.close();
  });

  it("Redis: buys answer 503 while its connection is silent, and sell again within seconds once Redis is reachable", async () => {
    const sale = await app.api.createSale({ stock: 50, perUserLimit: 1 });
    expect((await app.api.buy(sale.productToken, "r-before", 1)).status).toBe(202);

    redisProxy.stall("drop");
    const started = Date.now();
    const during = await within(
      15_000,
      "a buy on a silent Redis",
      app.api.buy(sale.productToken, "r-during", 1),
    );
    expect([during.status, code(during)]).toEqual([503, "UNAVAILABLE"]);
    expect(during.headers.get("retry-after")).toMatch(/^[1-9]/);
    // the resolve window (8 s; its last run may start just before it ends and wait its 2 s), then the
    // void's own Redis call (2 s), then the answer
    expect(Date.now() - started).toBeLessThan(13_000);

    redisProxy.resume();
    let n = 0;
    const took = await recoversWithin(8_000, "buys after Redis is reachable again", async () => {
      const res = await within(
        12_000,
        "a buy after resume",
        app.api.buy(sale.productToken, `r-after-${n++}`, 1),
      );
      return res.status === 202;
    });
    expect(took).toBeLessThan(6_000);
    expect(redisProxy.connections().silent).toBe(0);

    await app.drain();
    const stats = await app.api.stats(sale.saleId);
    expect(stats.body).toMatchObject({ invariantHolds: true });
    // the buy answered 503 reserved nothing
    expect(await app.redis.hexists(`sale:{s:${sale.saleId}}:holdings`, "r-during")).toBe(0);
  });

  it("Postgres: order reads answer 503 while the pool's connections are silent, and 200 within seconds after", async () => {
    const sale = await app.api.createSale({ stock: 20, perUserLimit: 1 });
    const orders: [string, string][] = [];
    for (let i = 0; i < 12; i++) {
      const buy = await app.api.buy(sale.productToken, `p-${i}`, 1);
      expect(buy.status).toBe(202);
      orders.push([(buy.body as { orderId: string }).orderId, `p-${i}`]);
    }
    await app.drain();
    // every read from Postgres now, on a warm pool
    for (const res of await Promise.all(orders.map(([id, user]) => app.api.order(id, user))))
      expect([res.status, (res.body as { status?: string }).status]).toEqual([200, "awaiting_payment"]);

    pgProxy.stall("drop");
    const started = Date.now();
    const during = await within(
      12_000,
      "order reads on a silent Postgres",
      Promise.all(orders.map(([id, user]) => app.api.order(id, user))),
    );
    expect(during.map((r) => [r.status, code(r)])).toEqual(orders.map(() => [503, "UNAVAILABLE"]));
    expect(Date.now() - started).toBeLessThan(10_000);

    pgProxy.resume();
    const took = await recoversWithin(8_000, "order reads after Postgres is reachable again", async () => {
      const reads = await within(
        12_000,
        "order reads after resume",
        Promise.all(orders.map(([id, user]) => app.api.order(id, user))),
      );
      return reads.every((r) => r.status === 200);
    });
    expect(took).toBeLessThan(6_000);
    expect(pgProxy.connections().silent).toBe(0);
  });
});

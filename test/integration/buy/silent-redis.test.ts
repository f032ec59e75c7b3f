import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type StallProxy, startStallProxy } from "../../../local/stall-proxy";
import type { ApiResponse } from "../../support/api";
import { type AppUnderTest, startApp, testRuntime } from "../../support/app";

/**
 * A buy on a silent Redis (it accepts connections and never answers: the engine's store behind a proxy
 * that swallows bytes, the REST endpoint on Workers, the TCP connection on Deno and Bun) is answered
 * 503 UNAVAILABLE within BUY_RESOLVE_WINDOW_MS, reruns and void included, and reserves nothing.
 */
const runtime = testRuntime();
const WINDOW_MS = 8_000;
/**
 * The window is the engine's, counted from when its handler starts; the trip to it and back (the test
 * client, wrangler's proxy, a loaded CI machine) is outside it. An engine that waited on the silent store
 * (a run's 2 s more, or for ever) would still fail.
 */
const TRIP_MS = 1_000;
const viaRest = runtime === "workers" || process.env.FLASH_STORES === "rest";

const code = (res: ApiResponse) => (res.body as { error?: { code?: string } }).error?.code;

describe(`on ${runtime}: a buy on a Redis that never answers`, () => {
  let app: AppUnderTest;
  let proxy: StallProxy;

  beforeAll(async () => {
    app = await startApp({
      vars: { RATE_LIMIT_USER_PER_WINDOW: "1000", BUY_RESOLVE_WINDOW_MS: String(WINDOW_MS) },
      async beforeEngine(stack) {
        const url = viaRest ? stack.vars.UPSTASH_REDIS_REST_URL : stack.redis.url;
        proxy = await startStallProxy({ target: url });
        const name = viaRest ? "UPSTASH_REDIS_REST_URL" : "REDIS_URL";
        return { [name]: proxy.via(url) };
      },
    });
  });
  afterEach(() => proxy?.resume());
  afterAll(async () => {
    await app?.stop();
    await proxy?.close();
  });

  it(`answers 503 within the resolve window (${WINDOW_MS} ms), reserving nothing`, async () => {
    const sale = await app.api.createSale({ stock: 20, perUserLimit: 1 });
    expect((await app.api.buy(sale.productToken, "silent-before", 1)).status).toBe(202);

    proxy.stall("drop");
    const started = Date.now();
    const during = await app.api.buy(sale.productToken, "silent-during", 1);
    const tookMs = Date.now() - started;
    console.log(`${runtime}: a buy on a silent Redis answered ${during.status} after ${tookMs} ms`);
    expect([during.status, code(during)]).toEqual([503, "UNAVAILABLE"]);
    expect(during.headers.get("retry-after")).toMatch(/^[1-9]/);
    expect(tookMs).toBeLessThan(WINDOW_MS + TRIP_MS);

    proxy.resume();
    let n = 0;
    for (const until = Date.now() + 20_000; Date.now() < until; ) {
      if ((await app.api.buy(sale.productToken, `silent-after-${n++}`, 1)).status === 202) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    await app.drain(30_000);
    expect(await app.redis.hexists(`sale:{s:${sale.saleId}}:holdings`, "silent-during")).toBe(0);
    expect((await app.api.stats(sale.saleId)).body).toMatchObject({ invariantHolds: true });
  });
});

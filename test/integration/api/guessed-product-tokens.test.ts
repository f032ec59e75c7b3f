import { describe, expect, it } from "vitest";
import { enumerateTokens, untilWritten } from "../../../chaos/enumerate";
import { saleKeys } from "../../../src/stock/keys";
import { appForFile } from "../../support/app-per-file";
import { checkedFetch } from "../../support/openapi-check";
import { snapshot } from "../../support/redis-inspect";
import { testRuntime } from "../../support/test-runtime";

/**
 * Guessed product tokens at volume: 10,000 in workerd; on Deno and Bun, which run the same app and
 * answer through the same code, 4,000 (the CI run's time goes to them). Every guess is 404
 * UNKNOWN_PRODUCT, answered before Redis, and nothing changes there.
 */
const GUESSES = testRuntime() === "workers" ? 10_000 : 4_000;

const app = appForFile({
  vars: {
    RATE_LIMIT_USER_PER_WINDOW: "1000000",
    RATE_LIMIT_IP_PER_WINDOW: "1000000",
    SHOPPER_LIMIT_USER_PER_WINDOW: "1000000",
    SHOPPER_LIMIT_IP_PER_WINDOW: "1000000",
  },
});

describe("guessing product tokens", () => {
  it(`${GUESSES.toLocaleString("en")} guessed product tokens: all 404 UNKNOWN_PRODUCT, not one stock command reaches Redis`, {
    timeout: 120_000,
  }, async () => {
    // 100,000 in `npm run chaos` (token-enumeration); a CI-sized share here
    const sale = await app.api.createSale({ stock: 5 });
    await app.api.buy(sale.productToken, "warm-up", 1);
    await untilWritten(app.redis, saleKeys(sale.saleId).orders);
    await app.drain();
    // the warm-up's rate-limit counters expire on their own while the guesses run
    const withoutCounters = (s: Record<string, unknown>) =>
      Object.fromEntries(Object.entries(s).filter(([k]) => !k.includes(":rl:")));
    const redisBefore = withoutCounters(await snapshot(app.redis));
    const result = await enumerateTokens({ url: app.worker.url, redis: app.redis }, GUESSES, {
      fetch: checkedFetch,
    });
    expect(result.answers).toEqual({ "404 UNKNOWN_PRODUCT": GUESSES });
    // a kept-alive connection closed under load is sent again, rarely
    expect(result.resent).toBeLessThan(GUESSES / 100);
    expect(result.scriptCalls, JSON.stringify(result.commands)).toBe(0);
    expect(result.writes).toEqual({});
    expect(result.commands.hget ?? 0, JSON.stringify(result.commands)).toBeLessThan(100);
    expect(withoutCounters(await snapshot(app.redis))).toEqual(redisBefore);
  });
});

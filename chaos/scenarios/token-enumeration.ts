import { saleKeys } from "../../src/stock/keys";
import { enumerateTokens, untilWritten } from "../enumerate";
import type { Scenario } from "../scenario";

/**
 * 100,000 guessed product tokens (10,000 at CI size) against a live sale: every answer must be 404
 * UNKNOWN_PRODUCT and not one stock command (script call or write) may reach Redis.
 */
export const tokenEnumeration: Scenario = {
  name: "token-enumeration",
  title: "Enumeration of random product tokens: zero stock commands reach Redis",
  async run(ctx) {
    await ctx.client.buy(ctx.sale.productToken, "warm-up", 1, "warm-up-0");
    await untilWritten(ctx.app.redis, saleKeys(ctx.sale.saleId).orders);
    await ctx.app.drain();
    const count = ctx.ms(10_000, 100_000);
    const result = await enumerateTokens({ url: ctx.app.worker.url, redis: ctx.app.redis }, count, {
      onAnswer: (status, code) => {
        const op = ctx.history.invoke({ kind: "buy", userId: "enumerator", quantity: 1 });
        ctx.history.complete(op, {
          outcome: status === 404 ? "failed" : "unknown",
          status,
          ...(code ? { code } : {}),
        });
      },
    });
    ctx.fault(
      `${count} random tokens in ${Math.round(result.ms / 1000)} s: ${result.scriptCalls} script calls, ` +
        `writes ${JSON.stringify(result.writes)}, ${result.commands.hget ?? 0} HGETs (Bloom false positives), ` +
        `${result.resent} sent again after a closed connection`,
    );
    if ((result.answers["404 UNKNOWN_PRODUCT"] ?? 0) !== count)
      ctx.violation(`answers were not all 404 UNKNOWN_PRODUCT: ${JSON.stringify(result.answers)}`);
    if (result.scriptCalls > 0) ctx.violation(`${result.scriptCalls} script calls reached Redis`);
    if (Object.keys(result.writes).length > 0)
      ctx.violation(`writes reached Redis: ${JSON.stringify(result.writes)}`);
  },
};

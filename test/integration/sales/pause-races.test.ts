import { describe, expect, it } from "vitest";
import { saleKeys } from "../../../src/stock/keys";
import { appForFile } from "../../support/app-per-file";

/**
 * Pause and resume sent at the same moment, many times over: whatever order they land in, Postgres and
 * Redis end up agreeing (the last of them to take the sale's row in Postgres is the one Redis keeps),
 * and a buy is answered as the flag both hold says.
 */
const app = appForFile({ vars: { RATE_LIMIT_USER_PER_WINDOW: "1000" } });

const ROUNDS = 20;
const PAIRS = 10;

async function flags(saleId: string) {
  const { rows } = await app.db.query<{ paused: boolean }>("select paused from sales where id = $1", [
    saleId,
  ]);
  const redis = await app.redis.hget(saleKeys(saleId).meta, "paused");
  return { postgres: rows[0]?.paused, redis: redis === "1" };
}

describe("concurrent pause and resume", () => {
  it(`leave Postgres and Redis agreeing (${ROUNDS} rounds of ${PAIRS} pause/resume pairs at once)`, async () => {
    const sale = await app.api.createSale({ stock: 100, perUserLimit: 100 });
    const path = (action: string) => `/sales/${sale.saleId}/${action}`;
    const disagreements: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const actions = Array.from({ length: 2 * PAIRS }, (_, i) => (i % 2 === round % 2 ? "pause" : "resume"));
      const answers = await Promise.all(actions.map((a) => app.api.admin("POST", path(a))));
      expect(answers.map((r) => r.status)).toEqual(actions.map(() => 200));
      const seen = await flags(sale.saleId);
      if (seen.postgres !== seen.redis)
        disagreements.push(`round ${round}: Postgres paused=${seen.postgres}, Redis paused=${seen.redis}`);
    }
    expect(disagreements).toEqual([]);

    // the flag both hold is the one a buy meets
    const { postgres } = await flags(sale.saleId);
    const buy = await app.api.buy(sale.productToken, "after-races", 1);
    expect(buy.status).toBe(postgres ? 409 : 202);
  });
});

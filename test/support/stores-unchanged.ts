import { expect } from "vitest";
import type { AppUnderTest } from "./app";
import { rowCounts } from "./db-inspect";
import { snapshot } from "./redis-inspect";

/**
 * Runs `work`, then expects Redis (rate-limit counters aside, they expire on their own) and the row
 * count of every table as they were before: what a refused request must leave behind.
 *
 * @example
 * await storesUnchanged(app, async () => {
 *   expect((await app.api.call("GET", "/api/admin/sales")).status).toBe(401);
 * });
 */
export async function storesUnchanged<T>(
  app: Pick<AppUnderTest, "redis" | "db">,
  work: () => Promise<T>,
): Promise<T> {
  const [redisBefore, pgBefore] = [await snapshot(app.redis), await rowCounts(app.db)];
  const result = await work();
  expect(await snapshot(app.redis)).toEqual(redisBefore);
  expect(await rowCounts(app.db)).toEqual(pgBefore);
  return result;
}

import { expect } from "vitest";
import { saleKeys } from "../../src/stock/keys";
import type { AppUnderTest } from "./app";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Waits until a sale lost with its Redis is rebuilt (its epoch is back), running the scheduled handler
 * every two seconds meanwhile: the minute's cron, sooner. A run that failed on a loaded machine (a store
 * call past its deadline) is run again, as the cron would run it, instead of the test waiting on one try.
 */
export async function untilRebuilt(app: AppUnderTest, saleId: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const epoch = () => app.redis.hget(saleKeys(saleId).meta, "epoch");
  let nextRun = 0;
  while (!(await epoch()) && Date.now() < deadline) {
    if (Date.now() >= nextRun) {
      nextRun = Date.now() + 2_000;
      await app.worker.scheduled().catch(() => {});
    } else {
      await sleep(100);
    }
  }
  expect(await epoch(), `sale ${saleId} rebuilt within ${timeoutMs} ms`).not.toBeNull();
}

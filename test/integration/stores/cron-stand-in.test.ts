import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CronTrigger, matchesCron, nextCronTime, startCron, wranglerCrons } from "../../../local/cron";
import { newOrderId } from "../../../src/ids";
import { type AppUnderTest, startApp } from "../../support/app";
import { reserve } from "../../support/lua";

let app: AppUnderTest;
let cron: CronTrigger | undefined;

beforeAll(async () => {
  app = await startApp({ vars: { OUTBOX_GRACE_SECONDS: "1" } });
});
afterAll(async () => {
  cron?.stop();
  await app?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("the local cron trigger", () => {
  it("reads the schedule production runs from wrangler.toml", () => {
    expect(wranglerCrons()).toEqual(["* * * * *"]);
  });

  it("computes the next firing like Cloudflare's cron (UTC, five fields)", () => {
    const t = Date.UTC(2026, 0, 5, 10, 17, 42, 500); // a Monday
    expect(nextCronTime("* * * * *", t)).toBe(Date.UTC(2026, 0, 5, 10, 18));
    expect(nextCronTime("*/15 * * * *", t)).toBe(Date.UTC(2026, 0, 5, 10, 30));
    expect(nextCronTime("0 9 * * MON-FRI", t)).toBe(Date.UTC(2026, 0, 6, 9, 0));
    expect(nextCronTime("5,10 0 1 JAN *", t)).toBe(Date.UTC(2027, 0, 1, 0, 5));
    expect(matchesCron("0 0 * * 0", Date.UTC(2026, 0, 4))).toBe(true); // a Sunday
    expect(matchesCron("0 0 * * 7", Date.UTC(2026, 0, 4))).toBe(true);
    expect(() => nextCronTime("0 0 L * *", t)).toThrow(/not supported/);
  });

  it("fires the worker's scheduled handler by itself: an order whose publish was lost is written", async () => {
    const sale = await app.api.createSale({ stock: 3 });
    // a reservation whose worker died before publishing: only the sweeper (the cron) can write it
    const orderId = newOrderId(sale.saleId);
    const reply = await reserve(app.redis, sale.saleId, {
      orderId,
      userId: "cron-orphan",
      quantity: 1,
      now: Date.now(),
    });
    expect(reply[0]).toBe(1);
    const fired: string[] = [];
    cron = startCron({
      fire: async (expression) => {
        fired.push(expression);
        await app.worker.scheduled(expression);
      },
      intervalMs: 500,
    });
    const deadline = Date.now() + 30_000;
    let status: unknown;
    while (Date.now() < deadline) {
      status = (await app.api.order(orderId, "cron-orphan")).body.status;
      if (status === "awaiting_payment") break;
      await sleep(200);
    }
    expect(status).toBe("awaiting_payment");
    expect(fired.length).toBeGreaterThan(0);
    expect(new Set(fired)).toEqual(new Set(["* * * * *"]));
    cron.stop();
    const after = fired.length;
    await sleep(1200);
    expect(fired.length).toBeLessThanOrEqual(after + 1); // at most the run already under way
  });
});

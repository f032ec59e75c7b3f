import { describe, expect, it } from "vitest";
import { appForFile } from "../../support/app-per-file";
import { commandCounts, commandDelta } from "../../support/redis-inspect";
import { shopperToken } from "../../support/shopper";

const app = appForFile({
  vars: {
    SHOPPER_LIMIT_USER_PER_WINDOW: "1000",
    // an admission holds its units 10 s: the 80 looks below end well within it, however busy the machine
    ADMISSION_WINDOW_SECONDS: "10",
    BUY_RESOLVE_WINDOW_MS: "1000",
  },
});

type Ticket = { position: number; frontier: number; verdict: string };

async function join(saleId: string, userId: string) {
  return app.api.call<Ticket>("POST", `/api/sales/${saleId}/queue`, {
    token: await shopperToken(userId),
    body: {},
  });
}

async function me(saleId: string, userId: string) {
  return (
    await app.api.call<Ticket>("GET", `/api/sales/${saleId}/queue/me`, { token: await shopperToken(userId) })
  ).body;
}

describe("the seal under a crowd", () => {
  it("the shoppers who look at the start do not all read and rank the line: one seals, the others wait for it", async () => {
    // every join lands before the start (40 joins have taken over 3 s on a loaded machine)
    const startsAt = Date.now() + 8_000;
    const sale = await app.api.createSale({
      admission: "queue",
      stock: 5,
      perUserLimit: 1,
      startsAt: new Date(startsAt).toISOString(),
    });
    const users = Array.from({ length: 40 }, (_, i) => `s${i}`);
    for (let i = 0; i < users.length; i += 10)
      await Promise.all(users.slice(i, i + 10).map((u) => join(sale.saleId, u)));
    expect(Date.now(), "all joined before the start").toBeLessThan(startsAt);
    await new Promise((r) => setTimeout(r, Math.max(0, startsAt - Date.now()) + 300));
    const before = await commandCounts(app.redis);
    const seen = await Promise.all(users.map((u) => me(sale.saleId, u)));
    const lineReads = commandDelta(before, await commandCounts(app.redis)).lrange ?? 0;
    // one seal: its read of the line, its read of the late joiners, the step after it (before: one per look)
    expect(lineReads).toBeLessThanOrEqual(4);
    // the ones that looked while it was sealed see the sealed line; the others see it at their next look
    const after = await Promise.all(users.map((u) => me(sale.saleId, u)));
    expect(after.filter((t) => t.verdict === "admitted")).toHaveLength(5);
    expect(new Set(after.map((t) => t.position)).size).toBe(users.length);
    expect(seen.every((t) => ["may_get", "admitted"].includes(t.verdict))).toBe(true);
  });
});

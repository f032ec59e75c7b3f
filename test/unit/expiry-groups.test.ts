import { describe, expect, it } from "vitest";
import { byExpirySecond } from "../../src/orders/enqueue-order";
import type { QueuedOrder } from "../../src/stock/queued-order";

const order = (orderId: string, expiresAt: number): QueuedOrder => ({
  orderId,
  saleId: "s000000000000",
  userId: "u",
  quantity: 1,
  createdAt: 1_000,
  expiresAt,
  epoch: 1,
});

describe("payment timeouts grouped by the second an order expires", () => {
  it("a 2 s window and a 1-day window in one batch get their own timeouts, earliest first", () => {
    const now = 1_000_000;
    const groups = byExpirySecond(
      [order("day", now + 86_400_000), order("short-1", now + 2_000), order("short-2", now + 2_004)],
      now,
    );
    expect(groups.map((g) => [g.notBefore, g.orders.map((o) => o.orderId)])).toEqual([
      [1_002, ["short-1"]],
      [1_003, ["short-2"]],
      [1_000 + 86_400, ["day"]],
    ]);
  });

  it("no order's timeout comes before it expires, nor more than a second after", () => {
    const now = 5_000_123;
    const orders = Array.from({ length: 50 }, (_, i) => order(`o${i}`, now + 600_000 + i * 37));
    for (const group of byExpirySecond(orders, now))
      for (const o of group.orders) {
        expect(group.notBefore * 1000).toBeGreaterThanOrEqual(o.expiresAt);
        expect(group.notBefore * 1000 - o.expiresAt).toBeLessThan(1000);
      }
    expect(byExpirySecond(orders, now).length).toBeLessThanOrEqual(3);
  });

  it("orders already past their window (a sweeper's republish) share one timeout, due now", () => {
    const now = 9_000_000;
    const groups = byExpirySecond([order("a", now - 60_000), order("b", now - 5_500), order("c", now)], now);
    expect(groups).toHaveLength(1);
    expect(groups[0]?.notBefore).toBe(9_000);
  });
});

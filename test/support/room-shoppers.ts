import type { AppUnderTest } from "./app";
import { untilRebuilt } from "./recovery";
import { shopperToken } from "./shopper";

/** A shopper's ticket as the room routes answer it. */
export type Ticket = {
  ticketId: string;
  position: number;
  frontier: number;
  verdict: string;
  admission?: { token: string; expiresAt: string };
};

/**
 * A waiting room's shoppers against one app: join, read their ticket, and Redis lost under the room
 * (restarted empty, the sales rebuilt by the sweep). Shared by the tests of a room through a loss.
 *
 * @example
 * const room = roomShoppers(app);
 * const ticket = (await room.join(saleId, "u1")).body;
 */
export function roomShoppers(app: AppUnderTest) {
  return {
    async join(saleId: string, userId: string) {
      return app.api.call<Ticket & Record<string, unknown>>("POST", `/api/sales/${saleId}/queue`, {
        token: await shopperToken(userId),
        body: {},
      });
    },
    async me(saleId: string, userId: string) {
      return app.api.call<Ticket & Record<string, unknown>>("GET", `/api/sales/${saleId}/queue/me`, {
        token: await shopperToken(userId),
      });
    },
    async loseRedis(...saleIds: string[]) {
      await app.stack.redis.restart({ empty: true });
      await app.reconnect();
      for (const saleId of saleIds) await untilRebuilt(app, saleId);
    },
  };
}

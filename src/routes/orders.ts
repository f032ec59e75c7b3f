import { Hono } from "hono";
import { type AppEnv, configOf, deps } from "../context";
import { ApiError } from "../errors";
import { parseJsonObject, readBoundedBody } from "../http/read-body";
import { saleIdOfOrder } from "../ids";
import { shopperAuth } from "../middleware/shopper-auth";
import { cancelOrder, payOrder, unknownOrder } from "../orders/order-lifecycle";
import { findOrder } from "../orders/order-repository";
import { queuedView, rowView } from "../orders/order-view";
import { readQueuedOrder } from "../orders/queued-order-store";

function orderSale(orderId: string): string {
  const saleId = saleIdOfOrder(orderId);
  if (!saleId) throw unknownOrder();
  return saleId;
}

/** Optional pay body: `{ "paymentRef": "…" }` (the payment provider's reference, up to 200 chars). */
function parsePaymentRef(text: string): string | null {
  const ref = parseJsonObject(text).paymentRef;
  if (ref === undefined || ref === null) return null;
  if (typeof ref !== "string" || ref.length === 0 || ref.length > 200) {
    throw new ApiError("INVALID_REQUEST", "paymentRef must be a string of 1 to 200 characters.");
  }
  return ref;
}

/**
 * Orders, owner only (anyone else gets 404, as if it did not exist). Polling reads Redis while the order
 * is queued (one HGET) and Postgres after (one query).
 */
export const orderRoutes = new Hono<AppEnv>()
  .use(shopperAuth({ settings: (c) => configOf(c) }))
  .get("/:orderId", async (c) => {
    const d = deps(c);
    const orderId = c.req.param("orderId");
    const saleId = orderSale(orderId);
    const userId = c.get("userId");
    c.header("Cache-Control", "no-store");
    const queued = await readQueuedOrder(d.redis, saleId, orderId);
    if (queued) {
      if (queued.userId !== userId) throw unknownOrder();
      return c.json(queuedView(queued));
    }
    const row = await findOrder(d.db, orderId, userId);
    if (!row) throw unknownOrder();
    return c.json(rowView(row));
  })
  .post("/:orderId/pay", async (c) => {
    const d = deps(c);
    const orderId = c.req.param("orderId");
    const paymentRef = parsePaymentRef(await readBoundedBody(c.req.raw, 1024));
    const row = await payOrder(d, orderSale(orderId), orderId, c.get("userId"), paymentRef);
    return c.json(rowView(row));
  })
  .post("/:orderId/cancel", async (c) => {
    const d = deps(c);
    const orderId = c.req.param("orderId");
    const row = await cancelOrder(d, orderSale(orderId), orderId, c.get("userId"));
    return c.json(rowView(row));
  });

import type { MiddlewareHandler } from "hono";
import { type AppEnv, configOf } from "../context";
import { ApiError } from "../http/api-error";

/**
 * The shopper's own `/pay` marks an order paid only with `PAYMENT_PROVIDER=local` (local development):
 * with a provider, 409 CHECKOUT_REQUIRED before the body or a store is read, so nothing changes.
 *
 * @example
 * middleware: [signedIn, limited("order-pay"), pressToPayOnlyLocally, jsonBody(...)] as const,
 */
export const pressToPayOnlyLocally: MiddlewareHandler<AppEnv> = async function pressToPayOnlyLocally(
  c,
  next,
) {
  if (configOf(c).PAYMENT_PROVIDER !== "local") {
    throw new ApiError(
      "CHECKOUT_REQUIRED",
      "A payment provider decides when this order is paid: ask for a checkout (POST /api/orders/{orderId}/checkout) and pay there.",
    );
  }
  await next();
};

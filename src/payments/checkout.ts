import { DEFAULT_VARIANT } from "../catalog/sale-record";
import { ownedRow } from "../orders/order-actions";
import { expireOrder } from "../orders/order-lifecycle";
import { findOrder } from "../orders/order-repository";
import type { OrderRow } from "../orders/order-view";
import type { PaymentDeps } from "../services";
import type { CheckoutLine } from "./payment-provider";
import {
  checkoutsToClose,
  markCheckoutsClosed,
  saleForPayment,
  storeCheckout,
  storedCheckout,
} from "./payment-repository";

/** The contract's checkout answer: where the shopper pays this order, until when. */
export type CheckoutView = {
  orderId: string;
  provider: "stripe" | "manual" | "local";
  url: string;
  expiresAt: string;
};

/** What asking for a checkout came to; every kind but `checkout` is a refusal the route maps. */
export type CheckoutOutcome =
  | { kind: "checkout"; checkout: CheckoutView }
  | { kind: "unknown" }
  | { kind: "paid" }
  | { kind: "expired" }
  | { kind: "cancelled" };

/**
 * The shopper's checkout for an order awaiting payment (a still-queued order is written first): with
 * Stripe a Checkout Session for price × quantity in CURRENCY, opened once and stored on the order, so
 * every retry, concurrent or later, answers the same one. Without a hosted checkout (`manual`, `local`)
 * the URL is the shopper page of the order, where the shop's own flow (or the local pay button) goes on.
 *
 * @example
 * const outcome = await openCheckout(deps, saleId, orderId, userId);
 * if (outcome.kind === "checkout") return c.json(outcome.checkout, 200);
 */
export async function openCheckout(
  deps: PaymentDeps,
  saleId: string,
  orderId: string,
  userId: string,
): Promise<CheckoutOutcome> {
  const row = await ownedRow(deps, saleId, orderId, userId);
  if (!row) return { kind: "unknown" };
  const current = await stillOpen(deps, row);
  if (current.status !== "awaiting_payment") {
    // expired here, or by a path that left its checkout open: nobody may pay it any more
    if (current.status !== "paid") deps.defer(closeCheckouts(deps, [orderId]));
    return { kind: current.status };
  }
  const view = (url: string): CheckoutOutcome => ({
    kind: "checkout",
    checkout: {
      orderId,
      provider: deps.config.PAYMENT_PROVIDER,
      url,
      expiresAt: row.expiresAt.toISOString(),
    },
  });
  if (!deps.payments) return view(shopperPage(deps, row, null));
  const stored = await storedCheckout(deps.db, orderId);
  if (stored) return view(stored.url);
  const sale = await saleForPayment(deps.db, saleId);
  if (!sale) return { kind: "unknown" };
  const created = await deps.payments.createCheckout({
    orderId,
    lines: checkoutLines(sale.name, row),
    currency: deps.config.CURRENCY,
    orderCreatedAt: row.createdAt.getTime(),
    orderExpiresAt: row.expiresAt.getTime(),
    successUrl: shopperPage(deps, row, "paid"),
    cancelUrl: shopperPage(deps, row, "cancelled"),
  });
  const kept = await storeCheckout(
    deps.db,
    orderId,
    { checkoutId: created.id, url: created.url },
    {
      provider: deps.payments.name,
      amountCents: row.amountCents,
      currency: deps.config.CURRENCY,
    },
  );
  if (kept) return view(kept.url);
  // the order left awaiting_payment while the session was opened: nobody may pay it
  const provider = deps.payments;
  deps.defer(provider.expireCheckout(created.id).catch(() => undefined));
  const after = (await findOrder(deps.db, orderId)) ?? row;
  return after.status === "awaiting_payment" ? { kind: "expired" } : { kind: after.status };
}

/**
 * Closes at the provider the checkouts of orders that expired or were cancelled (Stripe will not expire
 * a session sooner than 30 minutes itself): best effort, in the background; a payment that gets through
 * all the same is refunded when it arrives. Never throws.
 */
export async function closeCheckouts(deps: PaymentDeps, orderIds: string[]): Promise<void> {
  if (!deps.payments || orderIds.length === 0) return;
  try {
    const open = await checkoutsToClose(deps.db, orderIds);
    const closed: string[] = [];
    for (const { orderId, checkoutId } of open) {
      await deps.payments.expireCheckout(checkoutId).then(
        () => closed.push(orderId),
        (error: unknown) => console.warn(`checkout ${checkoutId} of ${orderId} not closed:`, String(error)),
      );
    }
    await markCheckoutsClosed(deps.db, closed);
  } catch (error) {
    console.warn("closing checkouts failed:", String(error));
  }
}

/** The order as it stands, expired here when its window closed by this clock (the database decides). */
async function stillOpen(deps: PaymentDeps, row: OrderRow): Promise<OrderRow> {
  if (row.status !== "awaiting_payment" || row.expiresAt.getTime() > deps.now) return row;
  return (await expireOrder(deps, row.id)) ?? row;
}

/** The shopper page of an order, where a checkout sends the shopper back (`checkout`: how it ended). */
function shopperPage(deps: PaymentDeps, row: OrderRow, checkout: "paid" | "cancelled" | null): string {
  const query = new URLSearchParams({ sale: row.saleId, order: row.id });
  if (checkout) query.set("checkout", checkout);
  return `${deps.config.PUBLIC_URL}/?${query.toString()}`;
}

/**
 * The order's lines as the checkout shows them: a one-variant sale's line is named after the sale (as
 * before variants), a drop's after the sale and the variant.
 */
function checkoutLines(saleName: string, row: OrderRow): CheckoutLine[] {
  const single = row.items.length === 1 && row.items[0]?.variantId === DEFAULT_VARIANT;
  return row.items.map((item) => ({
    name: single ? saleName : `${saleName}: ${item.name}`,
    unitAmountCents: item.priceCents,
    quantity: item.quantity,
  }));
}

/** One line of a checkout: what the shopper sees, the unit price and the units. */
export type CheckoutLine = { name: string; unitAmountCents: number; quantity: number };

/** What the engine asks a hosted checkout to sell: one order, its lines and so its amount fixed here. */
export type CheckoutRequest = {
  orderId: string;
  /** the order's lines (a one-variant sale's order has one, named after the sale) */
  lines: CheckoutLine[];
  currency: string;
  /** The order's creation and payment deadline (ms since the epoch): the checkout closes itself after it. */
  orderCreatedAt: number;
  orderExpiresAt: number;
  /** Where the shopper lands after paying, and after leaving the checkout without paying. */
  successUrl: string;
  cancelUrl: string;
};

/** A provider's hosted checkout for one order (a Stripe Checkout Session). */
export type Checkout = { id: string; url: string };

/**
 * A provider's event, verified: a payment for an order completed (`paid`), or something the engine
 * does not act on (`other`, recorded as seen all the same).
 */
export type PaymentEvent =
  | {
      kind: "paid";
      eventId: string;
      type: string;
      orderId: string | null;
      amountCents: number;
      currency: string;
      /** The provider's reference of the money taken (a PaymentIntent id): what a refund names. */
      paymentRef: string;
      checkoutId: string;
    }
  | { kind: "other"; eventId: string; type: string; orderId: string | null };

/**
 * The port a payment provider is reached through (src/payments/stripe-provider.ts). Each call fails
 * with `StoreUnavailableError("payments")` when the provider cannot be reached or refuses.
 */
export type PaymentProvider = {
  name: "stripe";
  /** Opens the order's checkout; the same one again for the same order (idempotent by order id). */
  createCheckout(request: CheckoutRequest): Promise<Checkout>;
  /** Closes a checkout nobody may pay any more (its order expired or was cancelled). */
  expireCheckout(checkoutId: string): Promise<void>;
  /** Gives a payment back in full; the same refund again for the same payment (however late it is asked again). */
  refund(orderId: string, paymentRef: string): Promise<string>;
  /** The event a signed delivery carries, or null when its signature does not verify. */
  verifyEvent(body: string, signature: string | null): Promise<PaymentEvent | null>;
};

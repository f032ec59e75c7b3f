const ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz";

function randomChars(n: number): string {
  const bytes = crypto.getRandomValues(new Uint8Array(n));
  let out = "";
  for (const b of bytes) out += ALPHABET[b % 36];
  return out;
}

/** A new sale id: `s` + 11 base36 characters (no "-"; order ids use it as a separator). */
export function newSaleId(): string {
  return `s${randomChars(11)}`;
}

/** A new order id that names its sale: `<saleId>-<20 base36 characters>` (~103 bits of randomness). */
export function newOrderId(saleId: string): string {
  return `${saleId}-${randomChars(20)}`;
}

/** The sale an order id belongs to, or null if the id is malformed. */
export function saleIdOfOrder(orderId: string): string | null {
  const match = /^(s[0-9a-z]{11})-[0-9a-z]{20}$/.exec(orderId);
  return match?.[1] ?? null;
}

/** A new id for an operator's stock adjustment. */
export function newAdjustmentId(): string {
  return `a${randomChars(16)}`;
}

/** A new waiting-room ticket id: `t` + 20 base36 characters. */
export function newTicketId(): string {
  return `t${randomChars(20)}`;
}

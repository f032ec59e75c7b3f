/** Sale definitions the tests share. */

/** Every field but `name` wrong in its own way (empty, negative, fractional, zero, not a date, backwards). */
export const INVALID_SALE_DEFINITION = {
  productId: "",
  name: "x",
  priceCents: -1,
  stock: 1.5,
  perUserLimit: 0,
  startsAt: "tomorrow",
  endsAt: "2020-01-01T00:00:00Z",
  paymentWindowSeconds: 0,
};

import { expect } from "vitest";
import { saleKeys } from "../../src/stock/keys";
import { type ReserveLine, reserveScriptCall } from "../../src/stock/reserve-call";
import type { AppUnderTest } from "./app";
import { lua } from "./lua";

/** Drops of several variants for the operator tests: made through the app, carts reserved by the script. */

export type VariantSpec = {
  variantId: string;
  stock: number;
  name?: string;
  perUserLimit?: number;
  priceCents?: number;
};

/** Creates a live drop of the given variants through `POST /api/admin/sales`. */
export function createDrop(
  app: AppUnderTest,
  variants: VariantSpec[],
  overrides: Record<string, unknown> = {},
) {
  return app.api.createSale({
    priceCents: undefined,
    stock: undefined,
    perUserLimit: 10,
    variants: variants.map((v) => ({ name: `Size ${v.variantId}`, priceCents: 1000, ...v })),
    ...overrides,
  });
}

/**
 * Reserves a cart's lines as the buy does (reserve-stock.lua, per variant when `perVariant`), without the
 * buy route; answers the order id, its reservation queued in Redis.
 */
export async function reserveCart(
  app: AppUnderTest,
  saleId: string,
  userId: string,
  lines: [string, number][],
  opts: { perVariant?: boolean; priceCents?: number } = {},
): Promise<string> {
  const cart: ReserveLine[] = lines.map(([variantId, quantity]) => ({
    variantId,
    quantity,
    priceCents: opts.priceCents ?? 1000,
    cap: 0,
  }));
  const quantity = cart.reduce((sum, l) => sum + l.quantity, 0);
  const orderId = `${saleId}-${userId}-${Math.random().toString(36).slice(2, 8)}`;
  const req = { saleId, orderId, userId, ip: "127.0.0.1", quantity, idempotencyKey: null, now: Date.now() };
  const { keys, args } = reserveScriptCall(
    { ...req, lines: cart, perVariant: opts.perVariant ?? true },
    { userPerWindow: 1000, ipPerWindow: 1_000_000, windowMs: 1000 },
  );
  const reply = (await app.redis.eval(lua("reserve-stock"), keys.length, ...keys, ...args)) as unknown[];
  expect(reply[0]).toBe(1);
  return orderId;
}

/**
 * Writes a queued reservation's order into Postgres with its lines and acknowledges it in Redis, as the
 * order-write job does (its rows, then the queued document removed): `awaiting_payment`.
 */
export async function writeOrder(app: AppUnderTest, saleId: string, orderId: string): Promise<void> {
  const keys = saleKeys(saleId);
  const doc = JSON.parse(String(await app.redis.hget(keys.orders, orderId))) as {
    userId: string;
    quantity: number;
    createdAt: number;
    expiresAt: number;
    items: { variantId: string; quantity: number; priceCents: number }[];
  };
  const names = await app.db.query<{ variant_id: string; name: string }>(
    "select variant_id, name from sale_variants where sale_id = $1",
    [saleId],
  );
  const nameOf = new Map(names.rows.map((r) => [r.variant_id, r.name]));
  const items = doc.items.map((i) => ({ ...i, name: nameOf.get(i.variantId) ?? i.variantId }));
  const amount = items.reduce((sum, i) => sum + i.quantity * i.priceCents, 0);
  await app.db.query(
    `insert into orders (id, sale_id, user_id, quantity, status, created_at, expires_at, items, amount_cents)
     values ($1, $2, $3, $4, 'awaiting_payment', to_timestamp($5 / 1000.0), to_timestamp($6 / 1000.0), $7::jsonb, $8)`,
    [orderId, saleId, doc.userId, doc.quantity, doc.createdAt, doc.expiresAt, JSON.stringify(items), amount],
  );
  await app.redis.hdel(keys.orders, orderId);
  await app.redis.zrem(keys.outbox, orderId);
}

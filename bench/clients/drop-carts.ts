/**
 * The drop crowd's carts (bench/phases/drop-crowd.ts): a seeded crowd of shoppers, each with a random cart
 * of 1 to 3 lines of 1 or 2 units, half of the lines on the two hot sizes; every tenth shopper comes back
 * later with a second cart, so the limit is tried across attempts as well as inside one cart.
 *
 * @example
 * const crowd = dropCrowd({ shoppers: 100_000, seed: 0, tag: "d-x1" });
 * await load.run({ kind: "list", items: crowd.items, ... });
 */
import type { ListPlan } from "./protocol";
import { clientIp, userId } from "./scenario";

export const DROP_SIZES = Array.from({ length: 12 }, (_, i) => `eu-${36 + i}`);
export const HOT_SIZES = new Set(["eu-42", "eu-43"]);

export type CartLine = { variantId: string; quantity: number };

/** Shoppers between a first cart and the same shopper's second (every tenth comes back). */
const COME_BACK_AFTER = 5_000;

/** A deterministic random source (the CI-sized test's), so a failing run can be run again as it was. */
export function seeded(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1_103_515_245 + 12_345) % 2 ** 31;
    return s / 2 ** 31;
  };
}

export function cartOf(next: () => number): CartLine[] {
  const lines = 1 + Math.floor(next() * 3);
  const cold = DROP_SIZES.filter((s) => !HOT_SIZES.has(s));
  const picked = new Set<string>();
  while (picked.size < lines) {
    const pool = next() < 0.5 ? [...HOT_SIZES] : cold;
    picked.add(pool[Math.floor(next() * pool.length)] as string);
  }
  return [...picked].map((variantId) => ({ variantId, quantity: next() < 0.8 ? 1 : 2 }));
}

export type DropCrowd = {
  items: ListPlan["items"];
  /** The cart of each attempt, by attempt index. */
  carts: CartLine[][];
  shoppers: number;
};

/** The crowd's attempts in order: each shopper's first cart, and every tenth shopper's second one later. */
export function dropCrowd(o: { shoppers: number; seed: number; tag: string }): DropCrowd {
  const next = seeded(20_261_127 + o.seed);
  const items: ListPlan["items"] = [];
  const carts: CartLine[][] = [];
  const attempt = (u: number) => {
    const cart = cartOf(next);
    carts.push(cart);
    items.push({
      user: userId(o.tag, u),
      quantity: cart.reduce((n, l) => n + l.quantity, 0),
      ip: clientIp(u),
      body: JSON.stringify({ items: cart }),
    });
  };
  const back = (u: number) => u >= 0 && u % 10 === 0;
  for (let u = 0; u < o.shoppers + COME_BACK_AFTER; u++) {
    if (u < o.shoppers) attempt(u);
    const returning = u - COME_BACK_AFTER;
    if (returning < o.shoppers && back(returning)) attempt(returning);
  }
  return { items, carts, shoppers: o.shoppers };
}

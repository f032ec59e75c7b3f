import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Redis } from "ioredis";
import { drawOrder, entriesHash, sortedEntries } from "../../src/room/draw";
import { saleKeys } from "../../src/stock/keys";
import { reserveScriptCall } from "../../src/stock/reserve-call";

const root = resolve(import.meta.dirname, "../..");
export const lua = (name: string) => readFileSync(join(root, "lua", `${name}.lua`), "utf8");

/** Preheats a sale the way the admin route does (init-sale.lua). */
export async function initSale(
  redis: Redis,
  saleId: string,
  o: {
    stock: number;
    perUserLimit: number;
    startsAt: number;
    endsAt: number;
    paymentWindowMs?: number;
    paused?: boolean;
  },
) {
  const k = saleKeys(saleId);
  const fields = {
    saleId,
    stock: o.stock,
    initialStock: o.stock,
    perUserLimit: o.perUserLimit,
    startsAt: o.startsAt,
    endsAt: o.endsAt,
    paused: o.paused ? "1" : "0",
    paymentWindowMs: o.paymentWindowMs ?? 60_000,
    epoch: 1,
  };
  return redis.eval(lua("init-sale"), 2, k.meta, k.stock, ...Object.entries(fields).flat().map(String));
}

export type Attempt = {
  orderId: string;
  userId: string;
  quantity: number;
  now: number;
  ip?: string;
  idem?: string;
  userLimit?: number;
  ipLimit?: number;
  /** the server running the same attempt again after a run without a reply */
  rerun?: boolean;
};

/** Runs reserve-stock.lua directly, with the KEYS/ARGV layout of src/stock/reserve.ts. */
export function reserve(redis: Redis, saleId: string, a: Attempt): Promise<(string | number)[]> {
  const { keys, args } = reserveScriptCall(
    {
      saleId,
      orderId: a.orderId,
      userId: a.userId,
      ip: a.ip ?? "127.0.0.1",
      quantity: a.quantity,
      idempotencyKey: a.idem ?? null,
      now: a.now,
      rerun: a.rerun,
    },
    { userPerWindow: a.userLimit ?? 1000, ipPerWindow: a.ipLimit ?? 1_000_000, windowMs: 1000 },
  );
  return redis.eval(lua("reserve-stock"), keys.length, ...keys, ...args) as Promise<(string | number)[]>;
}

export function restore(
  redis: Redis,
  saleId: string,
  o: { orderId: string; userId: string; quantity: number; now: number },
) {
  const args = [String(o.now), o.orderId, o.userId, String(o.quantity), "expired"];
  return redis.eval(lua("restore-stock"), 6, ...saleState(saleId), ...args) as Promise<(string | number)[]>;
}

/** Runs void-reservation.lua directly, with the KEYS/ARGV layout of src/stock/void.ts. */
export function voidReservation(
  redis: Redis,
  saleId: string,
  o: { orderId: string; userId: string; quantity: number; now: number; idem?: string },
) {
  return redis.eval(
    lua("void-reservation"),
    7,
    ...saleState(saleId),
    saleKeys(saleId).idempotency(o.userId, o.idem ?? "-"),
    String(o.now),
    o.orderId,
    o.userId,
    String(o.quantity),
    o.idem === undefined ? "0" : "1",
  ) as Promise<(string | number)[]>;
}

/**
 * Runs rebuild-sale.lua directly, with the KEYS/ARGV layout of src/recovery/rebuild.ts: `ledger` maps
 * fields to encoded entries (src/stock/ledger-entry.ts), `settled` the final orders the rebuild settled.
 */
export function rebuild(
  redis: Redis,
  saleId: string,
  o: {
    meta: Record<string, string>;
    remaining: number;
    holdings: Record<string, number>;
    ledger: Record<string, string>;
    settled?: string[];
  },
) {
  const args = [
    JSON.stringify(o.meta),
    String(o.remaining),
    JSON.stringify(o.holdings),
    JSON.stringify(o.ledger),
  ];
  if (o.settled) args.push(JSON.stringify(o.settled));
  return redis.eval(lua("rebuild-sale"), 6, ...saleState(saleId), ...args) as Promise<(string | number)[]>;
}

/** The keys of a sale's state, in the order restore, void and rebuild take them (KEYS[1..6]). */
function saleState(saleId: string): string[] {
  const k = saleKeys(saleId);
  return [k.meta, k.stock, k.holdings, k.ledger, k.orders, k.outbox];
}

/**
 * Seals a waiting room's line at `now` as src/room/room.ts does: room-line.lua reads it, the draw
 * orders it, room-seal.lua writes it. Answers room-line's code when it does not read a line, else
 * room-seal's.
 */
export async function sealRoom(redis: Redis, saleId: string, now: number): Promise<number> {
  const k = saleKeys(saleId);
  const line = (await redis.eval(lua("room-line"), 3, k.room, k.tickets, k.line)) as (string | number)[];
  if (Number(line[0]) !== 1) return Number(line[0]);
  const count = Number(line[2]);
  const users = line.slice(3, 3 + count).map(String);
  const ids = line.slice(3 + count).map(String);
  const userOf = new Map(ids.map((id, i) => [id, users[i] ?? ""]));
  const entries = sortedEntries(ids);
  const ranked = (await drawOrder(String(line[1]), entries)).map((id) => userOf.get(id) ?? "");
  const keys = [k.room, k.tickets, k.line, k.late, k.entries, k.journal];
  const args = [now, await entriesHash(entries), JSON.stringify(entries), ...ranked];
  return Number(await redis.eval(lua("room-seal"), keys.length, ...keys, ...args.map(String)));
}

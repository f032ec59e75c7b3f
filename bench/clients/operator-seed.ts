/**
 * Seeds a sale with `orders` orders straight in Postgres and Redis, in the shapes the engine writes
 * them (src/orders/order-writes.ts, src/stock/ledger-entry.ts), so the operator-scale phase can measure a
 * million-order sale without taking a million orders through the pipeline: one unit each, one user each;
 * 1 in 20 expired and restored (its "x:" entry), 1 in 7 of the rest paid, the others awaiting payment;
 * their holdings in both stores and the sale's remaining stock to match, so the invariant holds. The
 * orders' `order_events` rows are left out (nothing the stats or the reconciliation reads).
 */
import { Redis } from "ioredis";
import pg from "pg";
import { saleKeys } from "../../src/stock/keys";
import { encodeLedgerEntry, ledgerFieldOf } from "../../src/stock/ledger-entry";

const PG_CHUNK = 100_000;
const REDIS_CHUNK = 5_000;

const kindOf = (g: number) => (g % 20 === 0 ? "expired" : g % 7 === 0 ? "paid" : "awaiting_payment");
const orderId = (saleId: string, g: number) => `${saleId}-${String(g).padStart(20, "0")}`;

/** Writes the orders; answers the live units (awaiting payment and paid). */
export async function seedOrders(
  urls: { databaseUrl: string; redisUrl: string },
  sale: { saleId: string; stock: number },
  orders: number,
): Promise<{ liveUnits: number }> {
  const db = new pg.Client({ connectionString: urls.databaseUrl });
  await db.connect();
  const redis = new Redis(urls.redisUrl);
  try {
    await seedPostgres(db, sale.saleId, orders);
    const liveUnits = await seedRedis(redis, sale, orders);
    return { liveUnits };
  } finally {
    await db.end();
    redis.disconnect();
  }
}

async function seedPostgres(db: pg.Client, saleId: string, orders: number) {
  const kind = `case when g % 20 = 0 then 'expired' when g % 7 = 0 then 'paid' else 'awaiting_payment' end`;
  for (let from = 1; from <= orders; from += PG_CHUNK) {
    const to = Math.min(orders, from + PG_CHUNK - 1);
    await db.query(
      `insert into orders (id, sale_id, user_id, quantity, status, created_at, expires_at, epoch,
         paid_at, expired_at, restored_at)
       select $1 || '-' || lpad(g::text, 20, '0'), $1, 'u' || g, 1, ${kind},
         now() - interval '1 minute', now() + interval '1 hour', 1,
         case when ${kind} = 'paid' then now() end,
         case when ${kind} = 'expired' then now() end,
         case when ${kind} = 'expired' then now() end
       from generate_series($2::int, $3::int) g`,
      [saleId, from, to],
    );
    await db.query(
      `insert into holdings (sale_id, user_id, units, per_user_limit)
       select $1, 'u' || g, 1, 2 from generate_series($2::int, $3::int) g where g % 20 <> 0`,
      [saleId, from, to],
    );
  }
}

async function seedRedis(redis: Redis, sale: { saleId: string; stock: number }, orders: number) {
  const keys = saleKeys(sale.saleId);
  const at = Date.now() - 60_000;
  let liveUnits = 0;
  for (let from = 1; from <= orders; from += REDIS_CHUNK) {
    const ledger: Record<string, string> = {};
    const holdings: Record<string, string> = {};
    for (let g = from; g < from + REDIS_CHUNK && g <= orders; g++) {
      const id = orderId(sale.saleId, g);
      const reserve = { type: "reserve" as const, orderId: id, userId: `u${g}`, quantity: 1, at, epoch: 1 };
      ledger[ledgerFieldOf(reserve)] = encodeLedgerEntry(reserve);
      if (kindOf(g) === "expired") {
        const restore = {
          ...{ type: "restore" as const, orderId: id, userId: `u${g}`, quantity: 1 },
          ...{ before: 0, after: 1, at, reason: "expired" },
        };
        ledger[ledgerFieldOf(restore)] = encodeLedgerEntry(restore);
      } else {
        holdings[`u${g}`] = "1";
        liveUnits++;
      }
    }
    await redis.pipeline().hset(keys.ledger, ledger).hset(keys.holdings, holdings).exec();
  }
  await redis.set(keys.stock, String(sale.stock - liveUnits));
  return liveUnits;
}

import type { SaleRecord } from "../catalog/sale-record";
import { readAllSales } from "../catalog/sale-store";
import { enqueueOrders } from "../orders/enqueue-order";
import { expireOrder, settleRestore } from "../orders/order-lifecycle";
import { findOverdue, findUnrestored } from "../orders/order-repository";
import { readStaleOutbox } from "../orders/queued-order-store";
import { closeCheckouts } from "../payments/checkout";
import { tickRooms } from "../room/tick";
import type { Deps } from "../services";
import { publishLeftovers } from "../webhooks/publish";
import { announceSaleStatuses } from "../webhooks/sale-status";
import { reconcileSale } from "./reconcile-sale";
import { recoverLostSales } from "./recover-sales";

const BATCH = 200;
const PUBLISH_CHUNK = 50;
const OVERDUE_GRACE_SECONDS = 15;
const RECONCILE_AFTER_END_MS = 3600_000;

export type SweepReport = {
  recovered: number;
  republished: number;
  restored: number;
  expired: number;
  reconciled: number;
  /** queue and draw sales whose room was stepped (lapses, promotions, the cutoff) */
  rooms?: number;
  errors: number;
  /** webhook messages published from the outbox, and sale status changes announced */
  webhooks: number;
};

/**
 * The Cron Trigger's work, every minute; each step is idempotent and safe beside the QStash jobs:
 * 0. sales Redis lost (a failover, a flush) are rebuilt from Postgres;
 * 1. outbox entries older than the grace period (a worker died before publishing, or the write job was
 *    dead-lettered) are published again, under a per-minute deduplication id;
 * 2. expired or cancelled orders whose units are not back in Redis yet are restored;
 * 3. live sales (and those ended within the hour) are reconciled: Redis ledger against Postgres;
 * 4. unpaid orders well past their window (their timeout job is late or lost) are expired, and their
 *    checkouts closed at the provider;
 * 5. sales that opened, sold out, ended or were paused by the reconciliation are announced to webhook
 *    endpoints, each from a reading taken then (not the list read at the start: a status a sale lost
 *    meanwhile is not announced), and webhook messages left in the outbox (a failed publish) are published.
 * 6. the waiting rooms of queue and draw sales are stepped (src/room/tick.ts): where nobody
 *    watches or asks, lapsed admissions and returned units are still offered on.
 * Every runtime runs it from its own schedule (src/runtime/): Workers' Cron Trigger, `Deno.cron`, a timer on Bun.
 */
export async function sweep(deps: Deps): Promise<SweepReport> {
  const report: SweepReport = {
    recovered: 0,
    republished: 0,
    restored: 0,
    expired: 0,
    reconciled: 0,
    errors: 0,
    webhooks: 0,
  };
  const attempt = async (work: () => Promise<unknown>) => {
    try {
      await work();
      return true;
    } catch (error) {
      report.errors++;
      console.error("sweep", error);
      return false;
    }
  };
  await attempt(async () => {
    report.recovered = (await recoverLostSales(deps, { force: true })).length;
  });
  // after a recovery, so rebuilt sales are in the list
  let sales: SaleRecord[] = [];
  await attempt(async () => {
    sales = await readAllSales(deps.redis);
  });
  await attempt(() => republishStale(deps, sales, report, attempt));
  await attempt(async () => {
    for (const row of await findUnrestored(deps.db, BATCH)) {
      if (await attempt(() => settleRestore(deps, row))) report.restored++;
    }
  });
  await attempt(() => reconcileLive(deps, sales, report));
  await attempt(async () => {
    const expired: string[] = [];
    for (const orderId of await findOverdue(deps.db, OVERDUE_GRACE_SECONDS, BATCH)) {
      if (await attempt(() => expireOrder(deps, orderId))) {
        report.expired++;
        expired.push(orderId);
      }
    }
    // a payment at a checkout left open would be taken and then refunded (in the background: a slow
    // provider does not hold up the sweep's other steps)
    deps.defer(closeCheckouts(deps, expired));
  });
  await attempt(async () => {
    report.webhooks += await announceSaleStatuses(deps, sales);
  });
  await attempt(async () => {
    report.webhooks += await publishLeftovers(deps, deps.config.OUTBOX_GRACE_SECONDS);
  });
  await attempt(async () => {
    report.rooms = await tickRooms(deps, sales);
  });
  return report;
}

type Attempt = (work: () => Promise<unknown>) => Promise<boolean>;

/** Step 1: outbox entries older than the grace period, published again in chunks. */
async function republishStale(deps: Deps, sales: SaleRecord[], report: SweepReport, attempt: Attempt) {
  const { config, now } = deps;
  for (const sale of sales) {
    const since = now - config.OUTBOX_GRACE_SECONDS * 1000;
    const stale = await readStaleOutbox(deps.redis, sale.saleId, since, BATCH);
    for (let i = 0; i < stale.length; i += PUBLISH_CHUNK) {
      const chunk = stale.slice(i, i + PUBLISH_CHUNK);
      if (await attempt(() => enqueueOrders(deps, chunk, { generation: `s${Math.floor(now / 60_000)}` })))
        report.republished += chunk.length;
    }
  }
}

/** How long the sweep goes on reconciling one sale in chunks before it moves to the next. */
const RECONCILE_BUDGET_MS = 3_000;

/** Step 3: live sales (and those ended within the hour) reconciled, Redis ledger against Postgres. */
async function reconcileLive(deps: Deps, sales: SaleRecord[], report: SweepReport) {
  for (const sale of sales) {
    if (sale.startsAt > deps.now || sale.endsAt < deps.now - RECONCILE_AFTER_END_MS) continue;
    // a chunk a run; more chunks while the pass lasts and the run's budget does, so a big sale's pass
    // through its ledger takes minutes, not hours
    const started = Date.now();
    for (;;) {
      const result = await reconcileSale(deps, sale.saleId, deps.config.OUTBOX_GRACE_SECONDS * 1000);
      if (result.paused) console.error(`reconcile paused sale ${sale.saleId}: drift ${result.drift}`);
      if (result.passComplete || result.paused || Date.now() - started > RECONCILE_BUDGET_MS) break;
    }
    report.reconciled++;
  }
}

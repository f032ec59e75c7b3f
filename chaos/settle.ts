/**
 * Waits for a sale to come to rest after the faults are healed: QStash drained, the Cron sweeper run
 * (as the platform runs it every minute, here every second), until nothing is queued in Redis, no
 * unpaid order's window is still open or unexpired, and every expired or cancelled order's units are
 * back. Reads the stores directly; returns how long it took or throws what was left.
 */
import { saleKeys } from "../src/stock/keys";
import type { AppUnderTest } from "../test/support/app";

export type Remaining = { queued: number; outbox: number; awaiting: number; unrestored: number };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function leftToSettle(app: AppUnderTest, saleId: string): Promise<Remaining> {
  const k = saleKeys(saleId);
  const [queued, outbox] = await Promise.all([app.redis.hlen(k.orders), app.redis.zcard(k.outbox)]);
  const { rows } = await app.db.query(
    `select count(*) filter (where status = 'awaiting_payment')::int as awaiting,
            count(*) filter (where status in ('expired', 'cancelled') and restored_at is null)::int as unrestored
     from orders where sale_id = $1`,
    [saleId],
  );
  return { queued, outbox, awaiting: Number(rows[0]?.awaiting), unrestored: Number(rows[0]?.unrestored) };
}

export async function settle(
  app: AppUnderTest,
  saleId: string,
  opts: { timeoutMs: number; log?: (line: string) => void },
): Promise<{ settledMs: number; sweeps: number }> {
  const started = Date.now();
  const deadline = started + opts.timeoutMs;
  let left: Remaining | null = null;
  let sweeps = 0;
  for (;;) {
    await app.stack.qstash.idle(3_000).catch(() => undefined);
    await app.worker.scheduled().catch(() => undefined);
    sweeps++;
    left = await leftToSettle(app, saleId).catch(() => null);
    if (left && left.queued + left.outbox + left.awaiting + left.unrestored === 0) {
      await app.stack.qstash.idle(3_000).catch(() => undefined);
      return { settledMs: Date.now() - started, sweeps };
    }
    if (Date.now() > deadline) {
      opts.log?.(`  not settled after ${opts.timeoutMs} ms: ${JSON.stringify(left)}`);
      return { settledMs: Date.now() - started, sweeps };
    }
    await sleep(1_000);
  }
}

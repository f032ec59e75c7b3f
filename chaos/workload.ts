/**
 * The concurrent shopper workload every scenario runs under: `concurrency` loops, each picking a random
 * shopper who buys (usually with an Idempotency-Key, sometimes sending the same key twice at once, and
 * retrying it after an unknown or 503 answer, as a careful client does), then pays, cancels, races
 * both, polls, or walks away and lets the order expire. Seeded, so a run can be repeated.
 *
 * @example
 * await runWorkload(client, { productToken, users: 80, durationMs: 10_000, concurrency: 8, seed: 1 });
 */

import { prng } from "../bench/clients/scenario";
import type { RecordingClient } from "./client";
import type { Op } from "./history";

export type WorkloadOptions = {
  productToken: string;
  users: number;
  durationMs: number;
  concurrency: number;
  seed: number;
  /** quantities drawn uniformly from this list */
  quantities?: number[];
  /** share of buys sent with an Idempotency-Key */
  keyRate?: number;
  /** share of keyed buys sent twice at once */
  doubleSendRate?: number;
  payRate?: number;
  cancelRate?: number;
  /** share of orders that get a pay and a cancel at the same time */
  raceRate?: number;
  /** shoppers are `${userPrefix}${n}` (default "u"): a scenario may keep two phases' crowds apart */
  userPrefix?: string;
  /** stop early (a scenario's fault schedule may end the run) */
  signal?: AbortSignal;
};

/** The benchmark's seeded generator (mulberry32), so a seed means the same crowd in both tools. */
export const random = prng;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runWorkload(client: RecordingClient, o: WorkloadOptions): Promise<void> {
  const rnd = random(o.seed);
  const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
  const quantities = o.quantities ?? [1, 1, 2];
  const until = Date.now() + o.durationMs;
  let attempt = 0;
  const running = () => Date.now() < until && !o.signal?.aborted;

  async function buy(userId: string): Promise<Op | null> {
    const quantity = pick(quantities);
    const key = rnd() < (o.keyRate ?? 0.85) ? `${userId}-k${attempt++}` : undefined;
    const sends = key && rnd() < (o.doubleSendRate ?? 0.1) ? 2 : 1;
    let ops = await Promise.all(
      Array.from({ length: sends }, () => client.buy(o.productToken, userId, quantity, key)),
    );
    for (let retry = 0; retry < 2 && key && ops.every((op) => op.outcome !== "ok"); retry++) {
      if (!ops.some((op) => op.outcome === "unknown" || op.status === 503)) break;
      await sleep(150 + rnd() * 300);
      ops = [await client.buy(o.productToken, userId, quantity, key)];
    }
    return ops.find((op) => op.outcome === "ok") ?? null;
  }

  async function follow(op: Op): Promise<void> {
    const orderId = op.orderId as string;
    await sleep(rnd() * 400);
    const r = rnd();
    const pay = o.payRate ?? 0.45;
    const cancel = o.cancelRate ?? 0.2;
    const race = o.raceRate ?? 0.1;
    if (r < race) {
      await Promise.all([client.act("pay", orderId, op.userId), client.act("cancel", orderId, op.userId)]);
    } else if (r < race + pay) {
      const paid = await client.act("pay", orderId, op.userId);
      if (paid.outcome === "unknown" || paid.code === "ORDER_NOT_READY") {
        await sleep(300);
        await client.act("pay", orderId, op.userId);
      }
    } else if (r < race + pay + cancel) {
      await client.act("cancel", orderId, op.userId);
    } else if (rnd() < 0.5) {
      await client.get(orderId, op.userId);
    }
  }

  await Promise.all(
    Array.from({ length: o.concurrency }, async () => {
      while (running()) {
        const userId = `${o.userPrefix ?? "u"}${Math.floor(rnd() * o.users)}`;
        const ok = await buy(userId);
        if (ok) await follow(ok);
        else await sleep(20 + rnd() * 80);
      }
    }),
  );
}

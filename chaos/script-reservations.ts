/**
 * Reservations made by the reservation script alone, beside the workload: exactly what a worker does
 * before it dies (the script ran, no job was ever published). Each is recorded in the history as the
 * scenario says the client saw it; the outbox sweeper or a rebuild must then publish every one.
 *
 * @example
 * const orphans = await scriptOnlyReservations(ctx, { seed: 7, keyPrefix: "crash-", durationMs, ... });
 */
import { newOrderId } from "../src/ids";
import { reserve } from "../test/support/lua";
import type { Completion } from "./history";
import type { ScenarioContext } from "./scenario";
import { random } from "./workload";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export type ScriptReservations = {
  /** the generator's seed (users, quantities and pauses follow from it) */
  seed: number;
  /** Idempotency-Key prefix, numbered from 0 */
  keyPrefix: string;
  durationMs: number;
  /** pause after each reservation: `baseMs` plus up to `spreadMs` */
  pause: { baseMs: number; spreadMs: number };
  /** how the client saw the `i`-th attempt when the script reserved (the worker died before publishing) */
  reserved(i: number): Completion;
};

/** Runs for `durationMs`; resolves with how many reservations the script made. */
export async function scriptOnlyReservations(ctx: ScenarioContext, r: ScriptReservations): Promise<number> {
  const { app, sale, history } = ctx;
  const rnd = random(r.seed);
  let made = 0;
  const until = Date.now() + r.durationMs;
  for (let i = 0; Date.now() < until; i++) {
    const userId = `u${Math.floor(rnd() * (ctx.size === "ci" ? 40 : 150))}`;
    const quantity = rnd() < 0.7 ? 1 : 2;
    const idempotencyKey = `${r.keyPrefix}${i}`;
    const orderId = newOrderId(sale.saleId);
    const op = history.invoke({ kind: "buy", userId, quantity, idempotencyKey, orderId, via: "script" });
    try {
      const reply = await reserve(app.redis, sale.saleId, {
        orderId,
        userId,
        quantity,
        now: Date.now(),
        idem: idempotencyKey,
      });
      const reserved = Number(reply[0]) === 1;
      if (reserved) made++;
      history.complete(
        op,
        reserved ? r.reserved(i) : { outcome: "failed", status: 409, code: `script ${reply[0]}` },
      );
    } catch (error) {
      history.complete(op, { outcome: "unknown", note: String(error) });
    }
    await sleep(r.pause.baseMs + rnd() * r.pause.spreadMs);
  }
  return made;
}

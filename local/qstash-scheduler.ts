/**
 * The delivery engine of the local QStash server: an in-memory, at-least-once scheduler.
 *
 * A message is delivered at or after its `notBefore`, signed (see `qstash-delivery.ts`), at most
 * `concurrency` at a time. A 2xx answer delivers it (then its callback fires); anything else, or no
 * answer within its timeout, is retried after `Retry-After` when the destination sent one, else
 * `retryBaseMs * 2^(n-1)` capped at `maxBackoffMs`. After the last retry it goes to the DLQ and its
 * failure callback fires. Callbacks are messages too (retried, never calling back themselves).
 * Faults for tests: `duplicateRate` (deliver a delivered message once more), `delayJitterMs` (random extra
 * delay, so deliveries reorder) and `pauseDelivery` (hold everything until resumed).
 *
 * @example
 * const scheduler = createScheduler({ signingKey: () => key, retryBaseMs: 50 });
 * scheduler.enqueue(message);
 * await scheduler.idle(5_000); // everything due within 5 s has been delivered (or dead-lettered)
 */
import {
  type DeliveryCounters,
  enqueue,
  type Faults,
  notifyIdle,
  pending,
  pump,
  type SchedulerOptions,
  type SchedulerState,
  schedulerState,
  settledBy,
} from "./qstash-delivery-loop";
import type { QStashMessage } from "./qstash-message";

export type { DeliveryCounters, Faults, SchedulerOptions };

export type Scheduler = ReturnType<typeof createScheduler>;

export function createScheduler(options: SchedulerOptions) {
  const s = schedulerState(options);
  return {
    enqueue: (message: QStashMessage) => enqueue(s, message),
    counters: s.counters,
    /** Cancels a message not yet delivered (an attempt in flight completes, but is not retried). */
    cancel: (messageId: string) => cancel(s, messageId),
    messageIds: () => [...s.messages.keys()],
    pending: () => pending(s),
    inFlight: () => s.inFlight,
    dlq: () => [...s.dlq.values()],
    faults: (): Faults => ({ ...s.faults }),
    setFaults(next: Partial<Faults>): void {
      Object.assign(s.faults, next);
      if (!s.faults.pauseDelivery) pump(s);
    },
    /**
     * Resolves once nothing is in flight or waiting for a retry and no message falls due within
     * `timeoutMs` (one scheduled later, like a payment timeout 15 minutes out, does not hold it up);
     * rejects when that does not happen within `timeoutMs`.
     */
    idle: (timeoutMs = 10_000) => idle(s, timeoutMs),
    /**
     * Resolves once nothing is in flight and nothing is due within `horizonMs` (delayed messages, such as
     * payment timeouts far in the future, may still wait); rejects after `timeoutMs`.
     */
    settled: (timeoutMs = 10_000, horizonMs = 1_000) => settled(s, timeoutMs, horizonMs),
    close(): void {
      s.closing.abort();
      clearTimeout(s.timer);
    },
  };
}

function cancel(s: SchedulerState, messageId: string): boolean {
  const msg = s.messages.get(messageId);
  if (!msg) return false;
  msg.state = "CANCELED";
  s.messages.delete(messageId);
  s.counters.cancelled++;
  notifyIdle(s);
  return true;
}

function idle(s: SchedulerState, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  if (settledBy(s, deadline)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const done = () => {
      clearTimeout(timeout);
      s.idleWaiters.delete(done);
      resolve();
    };
    const timeout = setTimeout(() => {
      s.idleWaiters.delete(done);
      reject(
        new Error(`QStash not idle after ${timeoutMs} ms: ${pending(s)} pending, ${s.inFlight} in flight`),
      );
    }, timeoutMs);
    s.idleWaiters.set(done, deadline);
  });
}

async function settled(s: SchedulerState, timeoutMs: number, horizonMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const due = s.faults.pauseDelivery
      ? Number.POSITIVE_INFINITY
      : (s.queue.peekDue() ?? Number.POSITIVE_INFINITY);
    if (s.inFlight === 0 && due > Date.now() + horizonMs) return;
    if (Date.now() > deadline) {
      throw new Error(
        `QStash not settled after ${timeoutMs} ms: ${pending(s)} pending, ${s.inFlight} in flight`,
      );
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

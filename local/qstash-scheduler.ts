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
import { DueQueue } from "./due-queue";
import { deliver } from "./qstash-delivery";
import {
  callbackMessage,
  type DlqEntry,
  dlqEntry,
  type Outcome,
  parseRetryAfter,
  type QStashMessage,
  type Tracked,
} from "./qstash-message";

export type Faults = { duplicateRate: number; delayJitterMs: number; pauseDelivery: boolean };
const COUNTERS = [
  "published",
  "attempts",
  "delivered",
  "retries",
  "failed",
  "duplicates",
  "callbacks",
  "cancelled",
] as const;
/** What the scheduler did so far, for tests and `/__local/state`. */
export type DeliveryCounters = Record<(typeof COUNTERS)[number], number>;
export type SchedulerOptions = {
  signingKey: () => string;
  retryBaseMs?: number;
  maxBackoffMs?: number;
  maxRetries?: number;
  concurrency?: number;
  faults?: Partial<Faults>;
  /** How deliveries are sent (e.g. a `fetch` that trusts a test certificate); default the global one. */
  fetch?: typeof fetch;
};
type Job = { msg: Tracked; ghost: boolean };

export type Scheduler = ReturnType<typeof createScheduler>;

export function createScheduler(options: SchedulerOptions) {
  const retryBaseMs = options.retryBaseMs ?? 1_000;
  const maxBackoffMs = options.maxBackoffMs ?? 30_000;
  const concurrency = options.concurrency ?? 32;
  const faults: Faults = { duplicateRate: 0, delayJitterMs: 0, pauseDelivery: false, ...options.faults };
  const counters = Object.fromEntries(COUNTERS.map((name) => [name, 0])) as DeliveryCounters;
  const queue = new DueQueue<Job>();
  const messages = new Map<string, Tracked>();
  const dlq = new Map<string, DlqEntry>();
  const idleWaiters = new Map<() => void, number>();
  const closing = new AbortController();
  let ghosts = 0;
  let inFlight = 0;
  let timer: NodeJS.Timeout | undefined;
  let timerDue = Number.POSITIVE_INFINITY;

  const pending = () => messages.size + ghosts;
  /** Nothing in flight or retrying, and no first delivery due by `deadline`. */
  const settledBy = (deadline: number) => {
    if (inFlight > 0 || ghosts > 0) return false;
    for (const msg of messages.values())
      if (msg.state !== "CREATED" || msg.notBefore <= deadline) return false;
    return true;
  };
  const notifyIdle = () => {
    for (const [resolve, deadline] of idleWaiters) if (settledBy(deadline)) resolve();
  };
  const jitter = () => (faults.delayJitterMs > 0 ? Math.random() * faults.delayJitterMs : 0);
  const push = (due: number, job: Job) => {
    queue.push(due + jitter(), job);
    wake();
  };

  function wake(): void {
    if (closing.signal.aborted || faults.pauseDelivery || inFlight >= concurrency) return;
    const due = queue.peekDue();
    if (due === undefined || (timer && timerDue <= due)) return;
    clearTimeout(timer);
    timerDue = due;
    timer = setTimeout(pump, Math.min(Math.max(0, due - Date.now()), 2 ** 31 - 1));
  }

  function pump(): void {
    clearTimeout(timer);
    timer = undefined;
    if (closing.signal.aborted) return;
    timerDue = Number.POSITIVE_INFINITY;
    while (
      !faults.pauseDelivery &&
      inFlight < concurrency &&
      (queue.peekDue() ?? Number.POSITIVE_INFINITY) <= Date.now()
    ) {
      const job = queue.pop();
      if (job && (job.ghost || job.msg.state !== "CANCELED")) void attempt(job);
    }
    wake();
  }

  async function attempt({ msg, ghost }: Job): Promise<void> {
    inFlight++;
    counters.attempts++;
    if (!ghost) msg.state = "ACTIVE";
    const outcome = await deliver(msg, {
      signingKey: options.signingKey(),
      signal: closing.signal,
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
    inFlight--;
    if (ghost) ghosts--;
    else if (msg.state !== "CANCELED") settle(msg, outcome);
    notifyIdle();
    pump();
  }

  function settle(msg: Tracked, outcome: Outcome): void {
    const now = Date.now();
    if (outcome.status >= 200 && outcome.status < 300) {
      finish(msg);
      counters.delivered++;
      if (msg.callback && !msg.isCallback) callBack(callbackMessage(msg, "callback", outcome));
      if (Math.random() < faults.duplicateRate) {
        ghosts++;
        counters.duplicates++;
        push(now, { msg: { ...msg }, ghost: true });
      }
      return;
    }
    const nonRetryable =
      outcome.status === 489 && outcome.headers.get("upstash-nonretryable-error") === "true";
    if (msg.retried < msg.maxRetries && !nonRetryable) {
      msg.retried++;
      msg.state = "RETRY";
      counters.retries++;
      const retryAfter = parseRetryAfter(outcome.headers.get("retry-after"), now);
      const backoff = msg.retryDelayMs ?? Math.min(retryBaseMs * 2 ** (msg.retried - 1), maxBackoffMs);
      push(now + (retryAfter ?? backoff), { msg, ghost: false });
      return;
    }
    finish(msg);
    counters.failed++;
    const entry = dlqEntry(msg, outcome);
    dlq.set(entry.dlqId, entry);
    if (msg.failureCallback && !msg.isCallback)
      callBack(callbackMessage(msg, "failureCallback", outcome, entry.dlqId));
  }

  function finish(msg: Tracked): void {
    msg.state = "DONE";
    messages.delete(msg.messageId);
  }

  function callBack(message: QStashMessage): void {
    counters.callbacks++;
    enqueue({ ...message, maxRetries: options.maxRetries ?? 3 });
  }

  function enqueue(message: QStashMessage): void {
    const msg: Tracked = { ...message, retried: 0, state: "CREATED" };
    messages.set(msg.messageId, msg);
    if (!msg.isCallback) counters.published++;
    push(msg.notBefore, { msg, ghost: false });
  }

  return {
    enqueue,
    counters,
    /** Cancels a message not yet delivered (an attempt in flight completes, but is not retried). */
    cancel(messageId: string): boolean {
      const msg = messages.get(messageId);
      if (!msg) return false;
      msg.state = "CANCELED";
      messages.delete(messageId);
      counters.cancelled++;
      notifyIdle();
      return true;
    },
    messageIds: () => [...messages.keys()],
    pending,
    inFlight: () => inFlight,
    dlq: () => [...dlq.values()],
    faults: (): Faults => ({ ...faults }),
    setFaults(next: Partial<Faults>): void {
      Object.assign(faults, next);
      if (!faults.pauseDelivery) pump();
    },
    /**
     * Resolves once nothing is in flight or waiting for a retry and no message falls due within
     * `timeoutMs` (one scheduled later, like a payment timeout 15 minutes out, does not hold it up);
     * rejects when that does not happen within `timeoutMs`.
     */
    idle(timeoutMs = 10_000): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      if (settledBy(deadline)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const done = () => {
          clearTimeout(timeout);
          idleWaiters.delete(done);
          resolve();
        };
        const timeout = setTimeout(() => {
          idleWaiters.delete(done);
          reject(
            new Error(`QStash not idle after ${timeoutMs} ms: ${pending()} pending, ${inFlight} in flight`),
          );
        }, timeoutMs);
        idleWaiters.set(done, deadline);
      });
    },
    /**
     * Resolves once nothing is in flight and nothing is due within `horizonMs` (delayed messages, such as
     * payment timeouts far in the future, may still wait); rejects after `timeoutMs`.
     */
    async settled(timeoutMs = 10_000, horizonMs = 1_000): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const due = faults.pauseDelivery
          ? Number.POSITIVE_INFINITY
          : (queue.peekDue() ?? Number.POSITIVE_INFINITY);
        if (inFlight === 0 && due > Date.now() + horizonMs) return;
        if (Date.now() > deadline) {
          throw new Error(
            `QStash not settled after ${timeoutMs} ms: ${pending()} pending, ${inFlight} in flight`,
          );
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    close(): void {
      closing.abort();
      clearTimeout(timer);
    },
  };
}

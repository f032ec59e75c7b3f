/**
 * The local QStash scheduler's state and its delivery loop: messages wait in a due-time queue, a timer
 * wakes the pump when the earliest falls due, the pump starts attempts up to `concurrency`, and each
 * answer settles its message (delivered and called back, retried after a backoff, or dead-lettered).
 * See qstash-scheduler.ts for the behaviour and the API built on it.
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

/** Everything one scheduler holds; the functions below are its steps. */
export type SchedulerState = {
  options: SchedulerOptions;
  retryBaseMs: number;
  maxBackoffMs: number;
  concurrency: number;
  faults: Faults;
  counters: DeliveryCounters;
  queue: DueQueue<Job>;
  messages: Map<string, Tracked>;
  dlq: Map<string, DlqEntry>;
  /** Waiters of `idle()`, each with the deadline up to which nothing may fall due. */
  idleWaiters: Map<() => void, number>;
  closing: AbortController;
  /** Duplicate deliveries in flight or queued (the `duplicateRate` fault). */
  ghosts: number;
  inFlight: number;
  timer: NodeJS.Timeout | undefined;
  timerDue: number;
};

export function schedulerState(options: SchedulerOptions): SchedulerState {
  return {
    options,
    retryBaseMs: options.retryBaseMs ?? 1_000,
    maxBackoffMs: options.maxBackoffMs ?? 30_000,
    concurrency: options.concurrency ?? 32,
    faults: { duplicateRate: 0, delayJitterMs: 0, pauseDelivery: false, ...options.faults },
    counters: Object.fromEntries(COUNTERS.map((name) => [name, 0])) as DeliveryCounters,
    queue: new DueQueue<Job>(),
    messages: new Map(),
    dlq: new Map(),
    idleWaiters: new Map(),
    closing: new AbortController(),
    ghosts: 0,
    inFlight: 0,
    timer: undefined,
    timerDue: Number.POSITIVE_INFINITY,
  };
}

/** Messages not yet delivered, duplicates included. */
export const pending = (s: SchedulerState) => s.messages.size + s.ghosts;

/** Nothing in flight or retrying, and no first delivery due by `deadline`. */
export function settledBy(s: SchedulerState, deadline: number): boolean {
  if (s.inFlight > 0 || s.ghosts > 0) return false;
  for (const msg of s.messages.values())
    if (msg.state !== "CREATED" || msg.notBefore <= deadline) return false;
  return true;
}

export function notifyIdle(s: SchedulerState): void {
  for (const [resolve, deadline] of s.idleWaiters) if (settledBy(s, deadline)) resolve();
}

function push(s: SchedulerState, due: number, job: Job): void {
  const jitter = s.faults.delayJitterMs > 0 ? Math.random() * s.faults.delayJitterMs : 0;
  s.queue.push(due + jitter, job);
  wake(s);
}

/** Sets the timer for the earliest due job, unless one is set for it already. */
function wake(s: SchedulerState): void {
  if (s.closing.signal.aborted || s.faults.pauseDelivery || s.inFlight >= s.concurrency) return;
  const due = s.queue.peekDue();
  if (due === undefined || (s.timer && s.timerDue <= due)) return;
  clearTimeout(s.timer);
  s.timerDue = due;
  s.timer = setTimeout(() => pump(s), Math.min(Math.max(0, due - Date.now()), 2 ** 31 - 1));
}

/** Starts every due job there is room for, then sets the timer for the next. */
export function pump(s: SchedulerState): void {
  clearTimeout(s.timer);
  s.timer = undefined;
  if (s.closing.signal.aborted) return;
  s.timerDue = Number.POSITIVE_INFINITY;
  while (
    !s.faults.pauseDelivery &&
    s.inFlight < s.concurrency &&
    (s.queue.peekDue() ?? Number.POSITIVE_INFINITY) <= Date.now()
  ) {
    const job = s.queue.pop();
    if (job && (job.ghost || job.msg.state !== "CANCELED")) void attempt(s, job);
  }
  wake(s);
}

async function attempt(s: SchedulerState, { msg, ghost }: Job): Promise<void> {
  s.inFlight++;
  s.counters.attempts++;
  if (!ghost) msg.state = "ACTIVE";
  const outcome = await deliver(msg, {
    signingKey: s.options.signingKey(),
    signal: s.closing.signal,
    ...(s.options.fetch ? { fetch: s.options.fetch } : {}),
  });
  s.inFlight--;
  if (ghost) s.ghosts--;
  else if (msg.state !== "CANCELED") settle(s, msg, outcome);
  notifyIdle(s);
  pump(s);
}

function settle(s: SchedulerState, msg: Tracked, outcome: Outcome): void {
  const now = Date.now();
  if (outcome.status >= 200 && outcome.status < 300) delivered(s, msg, outcome, now);
  else if (msg.retried < msg.maxRetries && !nonRetryable(outcome)) retry(s, msg, outcome, now);
  else deadLetter(s, msg, outcome);
}

const nonRetryable = (outcome: Outcome) =>
  outcome.status === 489 && outcome.headers.get("upstash-nonretryable-error") === "true";

function delivered(s: SchedulerState, msg: Tracked, outcome: Outcome, now: number): void {
  finish(s, msg);
  s.counters.delivered++;
  if (msg.callback && !msg.isCallback) callBack(s, callbackMessage(msg, "callback", outcome));
  if (Math.random() < s.faults.duplicateRate) {
    s.ghosts++;
    s.counters.duplicates++;
    push(s, now, { msg: { ...msg }, ghost: true });
  }
}

/** Again after `Retry-After` when the destination sent one, else after the exponential backoff. */
function retry(s: SchedulerState, msg: Tracked, outcome: Outcome, now: number): void {
  msg.retried++;
  msg.state = "RETRY";
  s.counters.retries++;
  const retryAfter = parseRetryAfter(outcome.headers.get("retry-after"), now);
  const backoff = msg.retryDelayMs ?? Math.min(s.retryBaseMs * 2 ** (msg.retried - 1), s.maxBackoffMs);
  push(s, now + (retryAfter ?? backoff), { msg, ghost: false });
}

function deadLetter(s: SchedulerState, msg: Tracked, outcome: Outcome): void {
  finish(s, msg);
  s.counters.failed++;
  const entry = dlqEntry(msg, outcome);
  s.dlq.set(entry.dlqId, entry);
  if (msg.failureCallback && !msg.isCallback)
    callBack(s, callbackMessage(msg, "failureCallback", outcome, entry.dlqId));
}

function finish(s: SchedulerState, msg: Tracked): void {
  msg.state = "DONE";
  s.messages.delete(msg.messageId);
}

function callBack(s: SchedulerState, message: QStashMessage): void {
  s.counters.callbacks++;
  enqueue(s, { ...message, maxRetries: s.options.maxRetries ?? 3 });
}

export function enqueue(s: SchedulerState, message: QStashMessage): void {
  const msg: Tracked = { ...message, retried: 0, state: "CREATED" };
  s.messages.set(msg.messageId, msg);
  if (!msg.isCallback) s.counters.published++;
  push(s, msg.notBefore, { msg, ghost: false });
}

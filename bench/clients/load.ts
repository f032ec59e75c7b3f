/**
 * The load generator: a process of its own (forked by `run.ts`), so the requests it makes never share
 * an event loop with the servers under test. It receives a plan over IPC, mints the shoppers' tokens
 * before the clock starts, drives the target with `concurrency` keep-alive connections (node:http, one
 * request per connection at a time), reports progress every second, and answers with latency per
 * phase and outcome. With `pauseAtSoldOut` it stops sending at the first SOLD_OUT answer, lets the
 * requests in flight finish, and waits for `continue`: the orchestrator reads the counters between the
 * rush and what comes after, so both are measured, not estimated.
 */
import { Agent } from "node:http";
import { type Attempt, attempts, fire, outcomeOf } from "./load-attempts";
import { type AttemptRecord, attemptRecord, buckets, phaseSummaries, record, sumUnits } from "./load-record";
import type { FromLoad, LoadPlan, LoadResult, ToLoad } from "./protocol";

const send = (message: FromLoad) => process.send?.(message);

let continueSignal: (() => void) | null = null;

/** One plan's run: its attempts, what was answered so far, and where the lanes are. */
type Run = {
  plan: LoadPlan;
  count: number;
  at: (i: number) => Attempt;
  base: URL;
  agent: Agent;
  splitAtSoldOut: boolean;
  phaseNames: string[];
  /** ms between attempts in an open loop; 0: closed loop. */
  interval: number;
  rec: AttemptRecord;
  t0: number;
  phase: number;
  phaseStart: number[];
  firstOfPhase: number;
  next: number;
  inFlight: number;
  soldOutAtMs: number | null;
  /** Set from the first SOLD_OUT until `continue`: the lanes wait on it. */
  hold: Promise<void> | null;
  tick: Record<string, number>;
  tickDone: number;
};

function newRun(plan: LoadPlan): Run {
  const { count, at } = attempts(plan);
  const splitAtSoldOut = plan.kind === "scenario" && plan.pauseAtSoldOut;
  return {
    plan,
    count,
    at,
    base: new URL(plan.target.baseUrl),
    agent: new Agent({ keepAlive: true, maxSockets: plan.concurrency, maxFreeSockets: plan.concurrency }),
    splitAtSoldOut,
    phaseNames: splitAtSoldOut ? ["rush", "after"] : ["all"],
    interval: plan.kind === "scenario" && plan.rate ? 1000 / plan.rate : 0,
    rec: attemptRecord(count),
    t0: 0,
    phase: 0,
    phaseStart: [0, 0],
    firstOfPhase: 0,
    next: 0,
    inFlight: 0,
    soldOutAtMs: null,
    hold: null,
    tick: {},
    tickDone: 0,
  };
}

async function run(plan: LoadPlan): Promise<LoadResult> {
  const r = newRun(plan);
  send({ type: "started" });
  const cpu0 = process.cpuUsage();
  r.t0 = performance.now();
  const progress = setInterval(() => reportProgress(r), 1_000);
  await Promise.all(Array.from({ length: plan.concurrency }, () => lane(r)));
  clearInterval(progress);
  r.agent.destroy();
  const cpu = process.cpuUsage(cpu0);
  return result(r, cpu.user + cpu.system);
}

/** One connection's loop: the next attempt, its answer recorded, until none is left. */
async function lane(r: Run): Promise<void> {
  for (;;) {
    while (r.hold) await r.hold;
    const i = r.next++;
    if (i >= r.count) return;
    r.rec.phaseOf[i] = r.phase;
    const started = r.interval > 0 ? await openLoopSlot(r, i) : performance.now();
    r.inFlight++;
    const answer = await fire(r.agent, r.base, r.plan.target.method, r.at(i));
    const ended = performance.now();
    r.inFlight--;
    const { label, order } = outcomeOf(answer);
    record(r.rec, i, label, ended - started, ended - r.t0);
    r.tick[label] = (r.tick[label] ?? 0) + 1;
    if (order) {
      r.rec.orders.set(order.id, order.quantity);
      if (!r.rec.orderAttempt.has(order.id)) r.rec.orderAttempt.set(order.id, i);
    }
    if (r.splitAtSoldOut && r.phase === 0 && r.soldOutAtMs === null && label === "410 SOLD_OUT")
      pauseAtSoldOut(r, ended);
  }
}

/**
 * Open loop: attempt i is due at its slot; latency counts from the slot, so a late start (every
 * connection busy) shows up as latency instead of being left out.
 */
async function openLoopSlot(r: Run, i: number): Promise<number> {
  const now = performance.now();
  const due = r.t0 + (r.phaseStart[r.phase] as number) + (i - r.firstOfPhase) * r.interval;
  if (due > now) await new Promise((resolve) => setTimeout(resolve, due - now));
  return due;
}

/** The first SOLD_OUT: hold the lanes, let the requests in flight finish, then end the rush. */
function pauseAtSoldOut(r: Run, ended: number): void {
  r.soldOutAtMs = ended - r.t0;
  r.hold = new Promise<void>((resolve) => {
    const waitIdle = () => (r.inFlight === 0 ? resolve() : setTimeout(waitIdle, 1));
    waitIdle();
  })
    .then(() => endRush(r))
    .then(() => {
      r.hold = null;
    });
}

/** Tells the orchestrator the rush ended and waits for `continue`; then the "after" phase starts. */
async function endRush(r: Run): Promise<void> {
  send({
    type: "phase-end",
    phase: "rush",
    reservedOrders: r.rec.orders.size,
    reservedUnits: sumUnits(r.rec.orders),
  });
  await new Promise<void>((resolve) => {
    continueSignal = resolve;
  });
  r.phase = 1;
  r.phaseStart[1] = performance.now() - r.t0;
  r.firstOfPhase = r.next;
}

function reportProgress(r: Run): void {
  const done = Math.min(r.next, r.count) - r.inFlight;
  send({
    type: "progress",
    label: r.plan.label,
    phase: r.phaseNames[r.phase] as string,
    done,
    total: r.count,
    perSecond: done - r.tickDone,
    inFlight: r.inFlight,
    counts: r.tick,
  });
  r.tickDone = done;
  r.tick = {};
}

function result(r: Run, cpuMicros: number): LoadResult {
  const { finished, latency, outcome, labels, phaseOf, orders } = r.rec;
  return {
    label: r.plan.label,
    attempts: r.count,
    phases: phaseSummaries(r.rec, r.phaseNames, r.phaseStart),
    ...buckets(finished, latency, outcome, labels),
    rushBuckets: r.splitAtSoldOut
      ? buckets(finished, latency, outcome, labels, (i) => phaseOf[i] === 0, 100).buckets
      : [],
    soldOutAtMs: r.soldOutAtMs === null ? null : Math.round(r.soldOutAtMs),
    reservedOrders: orders.size,
    reservedUnits: sumUnits(orders),
    orderIds: [...orders.keys()],
    orderAttempts: [...orders.keys()].map((id) => r.rec.orderAttempt.get(id) as number),
    cpuMicros,
  };
}

process.on("message", (message: ToLoad) => {
  if (message.type === "continue") {
    continueSignal?.();
    continueSignal = null;
    return;
  }
  run(message.plan)
    .then((result) => send({ type: "done", result }))
    .catch((error: unknown) => send({ type: "error", message: String((error as Error)?.stack ?? error) }));
});
send({ type: "ready" });

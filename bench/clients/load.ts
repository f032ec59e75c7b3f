/**
 * The load generator: a process of its own (forked by `run.ts`), so the requests it makes never share
 * an event loop with the servers under test. It receives a plan over IPC, mints the shoppers' tokens
 * before the clock starts, drives the target with `concurrency` keep-alive connections (node:http, one
 * request per connection at a time), reports progress every second, and answers with latency per
 * phase and outcome. With `pauseAtSoldOut` it stops sending at the first SOLD_OUT answer, lets the
 * requests in flight finish, and waits for `continue`: the orchestrator reads the counters between the
 * rush and what comes after, so both are measured, not estimated.
 */
import { Agent, request } from "node:http";
import { shopperToken } from "./jwt";
import { summarize } from "./latency";
import type { Bucket, FromLoad, LoadPlan, LoadResult, PhaseSummary, ToLoad } from "./protocol";
import { clientIp, idempotencyKey, seedScenario, userId } from "./scenario";

type Attempt = { path: string; headers: Record<string, string>; body?: string };
type Answer = { status: number; body: string } | { error: string };

const send = (message: FromLoad) => process.send?.(message);

function attempts(plan: LoadPlan): { count: number; at: (i: number) => Attempt } {
  const post = plan.target.method === "POST";
  const tokens = new Map<string, string>();
  const bearer = (user: string) => {
    let token = tokens.get(user);
    if (!token) {
      token = `Bearer ${shopperToken(plan.jwtSecret, user)}`;
      tokens.set(user, token);
    }
    return token;
  };
  const build = (
    user: string,
    quantity: number,
    ip: string,
    key?: string,
    token?: string,
    anonymous = false,
  ): Attempt => {
    const path = token ? plan.target.path.replace("{token}", token) : plan.target.path;
    const headers: Record<string, string> = { "cf-connecting-ip": ip };
    if (!anonymous) headers.authorization = bearer(user);
    if (key) headers["idempotency-key"] = key;
    if (!post) return { path, headers };
    headers["content-type"] = "application/json";
    return { path, headers, body: `{"quantity":${quantity}}` };
  };
  if (plan.kind === "list") {
    const built = plan.items.map((it) => build(it.user, it.quantity, it.ip, it.key, it.token, it.anonymous));
    return { count: built.length, at: (i) => built[i] as Attempt };
  }
  const crowd = seedScenario({ users: plan.users, seed: plan.seed });
  const built: Attempt[] = [];
  for (let i = 0; i < crowd.attempts; i++) {
    const u = crowd.user[i] as number;
    const key = crowd.keyed[i] ? idempotencyKey(u) : undefined;
    built.push(build(userId(plan.tag, u), crowd.quantity[i] as number, clientIp(u), key));
  }
  return { count: built.length, at: (i) => built[i] as Attempt };
}

function fire(agent: Agent, base: URL, method: string, a: Attempt): Promise<Answer> {
  return new Promise((resolve) => {
    const req = request(
      {
        host: base.hostname,
        port: base.port,
        method,
        path: a.path,
        headers: a.headers,
        agent,
        timeout: 30_000,
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          body += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
        res.on("error", (e) => resolve({ error: (e as NodeJS.ErrnoException).code ?? e.message }));
      },
    );
    req.on("timeout", () => req.destroy(new Error("TIMEOUT")));
    req.on("error", (e) => resolve({ error: (e as NodeJS.ErrnoException).code ?? e.message }));
    req.end(a.body);
  });
}

function outcomeOf(answer: Answer): { label: string; order?: { id: string; quantity: number } } {
  if ("error" in answer) return { label: `ERR ${answer.error}` };
  let parsed: { orderId?: unknown; quantity?: unknown; error?: { code?: unknown } } = {};
  try {
    parsed = JSON.parse(answer.body);
  } catch {
    parsed = {};
  }
  if (answer.status < 300) {
    const order =
      typeof parsed.orderId === "string" || typeof parsed.orderId === "number"
        ? { id: String(parsed.orderId), quantity: Number(parsed.quantity ?? 1) }
        : undefined;
    return { label: String(answer.status), ...(order ? { order } : {}) };
  }
  return { label: `${answer.status} ${String(parsed.error?.code ?? "")}`.trim() };
}

let continueSignal: (() => void) | null = null;

async function run(plan: LoadPlan): Promise<LoadResult> {
  const { count, at } = attempts(plan);
  const base = new URL(plan.target.baseUrl);
  const agent = new Agent({
    keepAlive: true,
    maxSockets: plan.concurrency,
    maxFreeSockets: plan.concurrency,
  });
  const splitAtSoldOut = plan.kind === "scenario" && plan.pauseAtSoldOut;
  const phaseNames = splitAtSoldOut ? ["rush", "after"] : ["all"];
  const latency = new Float64Array(count);
  const finished = new Float64Array(count);
  const outcome = new Uint16Array(count);
  const phaseOf = new Uint8Array(count);
  const labels: string[] = [];
  const labelIndex = new Map<string, number>();
  const orders = new Map<string, number>();
  const phaseStart = [0, 0];
  let phase = 0;
  let next = 0;
  let inFlight = 0;
  let soldOutAtMs: number | null = null;
  let hold: Promise<void> | null = null;
  let firstOfPhase = 0;
  const interval = plan.kind === "scenario" && plan.rate ? 1000 / plan.rate : 0;
  let tick: Record<string, number> = {};
  let tickDone = 0;
  send({ type: "started" });
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();

  const progress = setInterval(() => {
    const done = Math.min(next, count) - inFlight;
    send({
      type: "progress",
      label: plan.label,
      phase: phaseNames[phase] as string,
      done,
      total: count,
      perSecond: done - tickDone,
      inFlight,
      counts: tick,
    });
    tickDone = done;
    tick = {};
  }, 1_000);

  const endRush = async () => {
    send({ type: "phase-end", phase: "rush", reservedOrders: orders.size, reservedUnits: sumUnits(orders) });
    await new Promise<void>((resolve) => {
      continueSignal = resolve;
    });
    phase = 1;
    phaseStart[1] = performance.now() - t0;
    firstOfPhase = next;
  };

  const lane = async () => {
    for (;;) {
      while (hold) await hold;
      const i = next++;
      if (i >= count) return;
      phaseOf[i] = phase;
      let started = performance.now();
      if (interval > 0) {
        // Open loop: attempt i is due at its slot; latency counts from the slot, so a late start
        // (every connection busy) shows up as latency instead of being left out.
        const due = t0 + (phaseStart[phase] as number) + (i - firstOfPhase) * interval;
        if (due > started) await new Promise((r) => setTimeout(r, due - started));
        started = due;
      }
      inFlight++;
      const answer = await fire(agent, base, plan.target.method, at(i));
      const ended = performance.now();
      inFlight--;
      latency[i] = ended - started;
      finished[i] = ended - t0;
      const { label, order } = outcomeOf(answer);
      let index = labelIndex.get(label);
      if (index === undefined) {
        index = labels.push(label) - 1;
        labelIndex.set(label, index);
      }
      outcome[i] = index;
      tick[label] = (tick[label] ?? 0) + 1;
      if (order) orders.set(order.id, order.quantity);
      if (splitAtSoldOut && phase === 0 && soldOutAtMs === null && label === "410 SOLD_OUT") {
        soldOutAtMs = ended - t0;
        hold = new Promise<void>((resolve) => {
          const waitIdle = () => (inFlight === 0 ? resolve() : setTimeout(waitIdle, 1));
          waitIdle();
        })
          .then(endRush)
          .then(() => {
            hold = null;
          });
      }
    }
  };
  await Promise.all(Array.from({ length: plan.concurrency }, lane));
  clearInterval(progress);
  agent.destroy();
  const cpu = process.cpuUsage(cpu0);

  const phases: PhaseSummary[] = phaseNames.map((name, p) => {
    const all: number[] = [];
    const per = new Map<string, number[]>();
    let last = phaseStart[p] as number;
    for (let i = 0; i < count; i++) {
      if (phaseOf[i] !== p) continue;
      const v = latency[i] as number;
      all.push(v);
      const label = labels[outcome[i] as number] as string;
      const values = per.get(label);
      if (values) values.push(v);
      else per.set(label, [v]);
      last = Math.max(last, finished[i] as number);
    }
    const durationMs = last - (phaseStart[p] as number);
    return {
      phase: name,
      attempts: all.length,
      durationMs: Math.round(durationMs),
      attemptsPerSecond: durationMs > 0 ? Math.round((all.length / durationMs) * 1000) : 0,
      latency: summarize(all),
      byOutcome: Object.fromEntries([...per].map(([label, values]) => [label, summarize(values)])),
    };
  });
  return {
    label: plan.label,
    attempts: count,
    phases,
    ...buckets(finished, latency, outcome, labels),
    rushBuckets: splitAtSoldOut
      ? buckets(finished, latency, outcome, labels, (i) => phaseOf[i] === 0, 100).buckets
      : [],
    soldOutAtMs: soldOutAtMs === null ? null : Math.round(soldOutAtMs),
    reservedOrders: orders.size,
    reservedUnits: sumUnits(orders),
    orderIds: [...orders.keys()],
    cpuMicros: cpu.user + cpu.system,
  };
}

function sumUnits(orders: Map<string, number>): number {
  let units = 0;
  for (const q of orders.values()) units += q;
  return units;
}

/** Answers per time slice (about 300 slices over the run, or `fixedMs` each) for the chart. */
function buckets(
  finished: Float64Array,
  latency: Float64Array,
  outcome: Uint16Array,
  labels: string[],
  include: (i: number) => boolean = () => true,
  fixedMs = 0,
): { buckets: Bucket[]; bucketMs: number } {
  let end = 0;
  for (const t of finished) end = Math.max(end, t);
  const bucketMs = fixedMs || Math.max(100, Math.ceil(end / 300 / 50) * 50);
  const groups: { lat: number[]; byOutcome: Record<string, number> }[] = [];
  finished.forEach((t, i) => {
    if (!include(i)) return;
    const b = Math.floor(t / bucketMs);
    while (groups.length <= b) groups.push({ lat: [], byOutcome: {} });
    const g = groups[b] as (typeof groups)[number];
    g.lat.push(latency[i] as number);
    const label = labels[outcome[i] as number] as string;
    g.byOutcome[label] = (g.byOutcome[label] ?? 0) + 1;
  });
  return {
    bucketMs,
    buckets: groups.map((g, b) => {
      const s = summarize(g.lat);
      return { t: b * bucketMs, count: s.count, p50: s.p50, p99: s.p99, byOutcome: g.byOutcome };
    }),
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

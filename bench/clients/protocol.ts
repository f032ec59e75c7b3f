/**
 * Messages between the orchestrator (`run.ts`) and the load generator (`load.ts`), a forked process
 * of its own so that making requests never shares an event loop with the servers under test.
 */

/** Where requests go. `path` may contain `{token}`, replaced by `token`. */
export type Target = { baseUrl: string; path: string; method: "POST" | "GET" };

type Common = {
  label: string;
  target: Target;
  concurrency: number;
  jwtSecret: string;
};

/** The seed-000 crowd (see `scenario.ts`); with `pauseAtSoldOut` the run is split at the first 410. */
export type ScenarioPlan = Common & {
  kind: "scenario";
  users: number;
  seed: number;
  /** Prefix of user ids, so two runs never share a user. */
  tag: string;
  pauseAtSoldOut: boolean;
  /** Open loop: attempts start at this many per second (0 or absent: closed loop, as fast as answered). */
  rate?: number;
};

/** An explicit list of attempts (the per-outcome probes and their preparation). */
export type ListPlan = Common & {
  kind: "list";
  /**
   * `token` fills `{token}` in the target's path; `anonymous` sends no Authorization header; `body` is sent
   * as it is (a cart, `{"items":[…]}`) instead of `{"quantity":…}`.
   */
  items: {
    user: string;
    quantity: number;
    key?: string;
    ip: string;
    token?: string;
    anonymous?: boolean;
    body?: string;
  }[];
};

export type LoadPlan = ScenarioPlan | ListPlan;

export type LatencySummary = {
  count: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
};

export type PhaseSummary = {
  phase: string;
  attempts: number;
  /** First request sent to last answer received, ms. */
  durationMs: number;
  attemptsPerSecond: number;
  latency: LatencySummary;
  byOutcome: Record<string, LatencySummary>;
};

/** Answers per outcome and latency per time bucket (from `t` ms), for the chart. */
export type Bucket = Pick<LatencySummary, "count" | "p50" | "p99"> & {
  t: number;
  byOutcome: Record<string, number>;
};

export type LoadResult = {
  label: string;
  attempts: number;
  phases: PhaseSummary[];
  buckets: Bucket[];
  bucketMs: number;
  /** The rush alone, in 100 ms slices (empty when the run was not split at sell-out). */
  rushBuckets: Bucket[];
  /** ms from the first request to the first SOLD_OUT answer (null: never sold out). */
  soldOutAtMs: number | null;
  /** Distinct orders and units the 202 answers named (replays carry the same order id). */
  reservedOrders: number;
  reservedUnits: number;
  orderIds: string[];
  /** For each of `orderIds`, the index of the first attempt whose answer named it. */
  orderAttempts: number[];
  /** CPU the load generator itself used, µs (it shares the machine with the servers). */
  cpuMicros: number;
};

/** A run's figures without its order ids (what the result files keep). */
export type LoadFigures = Omit<LoadResult, "orderIds" | "orderAttempts">;

export type ToLoad = { type: "run"; plan: LoadPlan } | { type: "continue" };

export type FromLoad =
  | { type: "ready" }
  /** Tokens are minted; the first request goes out now. */
  | { type: "started" }
  | {
      type: "progress";
      label: string;
      phase: string;
      done: number;
      total: number;
      perSecond: number;
      inFlight: number;
      counts: Record<string, number>;
    }
  /** The rush ended (first SOLD_OUT, nothing in flight); the generator waits for `continue`. */
  | { type: "phase-end"; phase: string; reservedOrders: number; reservedUnits: number }
  | { type: "done"; result: LoadResult }
  | { type: "error"; message: string };

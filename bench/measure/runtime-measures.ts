/** The records of the server runtimes' rows (bench/phases/runtimes.ts) and the figures of one measured phase. */

import type { LoadFigures, PhaseSummary } from "../clients/protocol";
import type { Check } from "./checks";
import { type Measured, perAttempt } from "./measures";
import { Meter, type Reading } from "./meter";

/** A meter reading and the CPU µs (utime + stime) of the process under test at the same moment. */
export type CpuReading = { meter: Reading; cpu: number };

/** A phase with its costs; `serverCpuMicros` is the engine's (or naive server's) process per attempt. */
export type RuntimeMeasured = Measured & { serverCpuMicros: number };

export type RuntimeRow = {
  runtime: "deno" | "bun";
  engine: {
    load: LoadFigures;
    phases: RuntimeMeasured[];
    soldOutAtMs: number | null;
    drainedAtMs: number | null;
    /** The engine's first warning or error lines, if any. */
    errors: string[];
  };
  /** Per-outcome probes (QStash delivery paused): admitted, Bloom miss, sold out in a warm process. */
  probes: (RuntimeMeasured & { name: string; expect: string; expectedShare: number })[];
  naive: {
    http: "native" | "node";
    load: LoadFigures;
    phases: RuntimeMeasured[];
    units: number;
    orders: number;
    stockLeft: number;
  } | null;
  checks: Check[];
};

export function measured(phase: PhaseSummary, a: CpuReading, b: CpuReading): RuntimeMeasured {
  const costs = Meter.costs(a.meter, b.meter);
  const n = Math.max(1, phase.attempts);
  return {
    phase,
    costs,
    per: perAttempt(costs, phase.attempts),
    serverCpuMicros: Math.round(((b.cpu - a.cpu) / n) * 10) / 10,
  };
}

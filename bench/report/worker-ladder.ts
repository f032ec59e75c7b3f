/** The report's ladder: worker CPU per attempt along the buy path, probe by probe. */
import type { BenchResult } from "../measure/measures";
import { type Cell, round } from "./table";

/** Worker CPU per attempt along the buy path, each probe adding one step to the one before it. */
export function workerLadder(r: BenchResult): Cell[][] {
  const cpu = (name: string) => r.probes.find((p) => p.name === name)?.per.workerCpuMicros ?? null;
  const steps: [string, string, string][] = [
    ["no-op route GET /api/health", "HTTP, Hono, secure headers (Miniflare's entry worker included)", ""],
    ["no shopper token", "POST body read + parse, 401 error rendering", "no-op route GET /api/health"],
    ["malformed product token", "JWT verify (hono/jwt, HS256)", "no shopper token"],
    ["unknown product (Bloom miss)", "Bloom filter check of the token", "malformed product token"],
    [
      "sold out, warm isolate",
      "token → sale lookup (cached) + sold-out cache",
      "unknown product (Bloom miss)",
    ],
    [
      "sold out, keyed (script answers)",
      "one reservation script over Upstash REST",
      "sold out, warm isolate",
    ],
    [
      "replay of a keyed attempt",
      "QStash publish of the order's two jobs (waitUntil)",
      "sold out, keyed (script answers)",
    ],
    ["reserve (admitted, stock left)", "the admitted attempt, end to end", ""],
  ];
  return steps
    .filter(([name]) => cpu(name) !== null)
    .map(([name, adds, before]) => {
      const total = cpu(name) as number;
      const prev = before ? cpu(before) : null;
      return [name, adds, round(total, 0), prev === null ? null : round(total - prev, 0)];
    });
}

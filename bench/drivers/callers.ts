/**
 * The load of the client benchmarks (bench/drivers/redis-clients.ts, bench/drivers/postgres-clients.ts): CALLERS
 * concurrent callers sharing one client, each issuing its next call as soon as its last one answered.
 *
 * @example
 * const get = await backToBack(10_000, () => client.get("b:stock"));  // { perSecond, cpuUsPerCall }
 */
import process from "node:process";

export const CALLERS = 50;

/** The runtime the benchmark runs on, as its JSON lines name it. */
export const runtime = "Bun" in globalThis ? "bun" : "Deno" in globalThis ? "deno" : "node";

/** `calls` calls (numbered from 0) back to back: calls per second and this process's CPU µs per call. */
export async function backToBack(
  calls: number,
  call: (i: number) => Promise<unknown>,
): Promise<{ perSecond: number; cpuUsPerCall: number }> {
  let next = 0;
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CALLERS }, async () => {
      while (next < calls) await call(next++);
    }),
  );
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  return {
    perSecond: Math.round((calls / ms) * 1000),
    cpuUsPerCall: Math.round(((used.user + used.system) / calls) * 10) / 10,
  };
}

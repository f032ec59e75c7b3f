/**
 * The runtimes part of `npm run bench` as run.ts calls it: which runtimes (`--runtimes`), the server
 * runtimes' rows (bench/phases/runtimes.ts), the table, bench/output/latest-runtimes.json and .svg.
 */
import { execFileSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { runtimeBinary, type ServerRuntimeName } from "../../local/server-runtime";
import type { BenchResult } from "../measure/measures";
import { renderRuntimesChart } from "../report/runtimes-chart";
import { printRuntimes } from "../report/runtimes-report";
import { summarizeRuntimes } from "../report/runtimes-summary";
import { type RuntimeBenchContext, serverRuntimeRows } from "./runtimes";

/** `--runtimes workers,deno,bun` (any subset): whether the workerd rows run, and which server runtimes. */
export function parseRuntimes(list: string): { workers: boolean; servers: ServerRuntimeName[] } {
  const names = list
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  for (const n of names)
    if (n !== "workers" && n !== "deno" && n !== "bun") throw new Error(`--runtimes: unknown runtime ${n}`);
  return {
    workers: names.includes("workers"),
    servers: (["deno", "bun"] as const).filter((n) => names.includes(n)),
  };
}

function version(runtime: ServerRuntimeName): string {
  try {
    const text = execFileSync(runtimeBinary(runtime), ["--version"]).toString();
    return /(\d+\.\d+\.\d+)/.exec(text)?.[1] ?? text.trim();
  } catch {
    return "?";
  }
}

/** Runs the server runtimes' rows, prints the table and writes the files; true when their checks hold. */
export async function finishRuntimes(
  ctx: RuntimeBenchContext,
  servers: ServerRuntimeName[],
  result: BenchResult | null,
  out: string,
): Promise<boolean> {
  if (servers.length === 0 && !result) return true;
  const rows = await serverRuntimeRows(ctx, servers);
  const summary = summarizeRuntimes(result, rows);
  const versions = {
    ...(result ? { workerd: "via Miniflare", node: process.version } : {}),
    ...Object.fromEntries(servers.map((s) => [s, version(s)])),
  };
  const checks = rows.flatMap((r) => r.checks);
  await writeFile(
    join(out, "latest-runtimes.json"),
    `${JSON.stringify({ date: new Date().toISOString(), command: `npm run bench -- ${process.argv.slice(2).join(" ")}`.trim(), versions, summary, rows, checks }, null, 2)}\n`,
  );
  await writeFile(
    join(out, "latest-runtimes.svg"),
    renderRuntimesChart(summary, { users: ctx.users, concurrency: ctx.concurrency, versions }),
  );
  printRuntimes(summary, versions);
  if (checks.length > 0) {
    console.log("\nInvariant (server runtimes)");
    for (const k of checks) console.log(`  ${k.ok ? "✓" : "✗"} ${k.name}: ${k.detail.slice(0, 140)}`);
  }
  console.log(`\nwrote ${join(out, "latest-runtimes.json")} and latest-runtimes.svg`);
  return checks.every((c) => c.ok);
}

/**
 * The chaos report: one row per scenario (operations, faults injected, acknowledged, lost, oversold,
 * duplicates, verdict) as a terminal table, chaos/output/report.md and report.json.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ScenarioResult, Size } from "./scenario";

type Row = Record<
  "scenario" | "operations" | "faults" | "acknowledged" | "lost" | "oversold" | "duplicates" | "verdict",
  string
>;

function row(r: ScenarioResult): Row {
  const f = r.check?.figures;
  const n = (x: number | undefined) => (x === undefined ? "–" : String(x));
  const rules = r.check ? [...new Set(r.check.violations.map((v) => v.rule))].join(", ") : "";
  return {
    scenario: r.name,
    operations: f ? `${f.operations} (${f.buys.ok}/${f.buys.failed}/${f.buys.unknown})` : "–",
    faults: r.faults.join("; ") || "–",
    acknowledged: f ? `${f.acknowledged} (${f.acknowledgedUnits} u)` : "–",
    lost: n(f?.lost),
    oversold: n(f?.oversold),
    duplicates: n(f?.duplicates),
    verdict:
      r.verdict === "FAIL"
        ? `FAIL: ${rules}`
        : r.verdict === "pass"
          ? "pass"
          : `${r.verdict}: ${r.reason ?? ""}`,
  };
}

const HEADERS: Row = {
  scenario: "scenario",
  operations: "operations (buys ok/refused/unknown)",
  faults: "faults injected",
  acknowledged: "acknowledged",
  lost: "lost",
  oversold: "oversold",
  duplicates: "duplicates",
  verdict: "verdict",
};

export function markdownTable(results: ScenarioResult[]): string {
  const cols = Object.keys(HEADERS) as (keyof Row)[];
  const cell = (s: string) => s.replaceAll("|", "\\|");
  return [
    `| ${cols.map((c) => HEADERS[c]).join(" | ")} |`,
    `|${cols.map(() => "---").join("|")}|`,
    ...results.map(row).map((r) => `| ${cols.map((c) => cell(r[c])).join(" | ")} |`),
  ].join("\n");
}

/** A compact table for the terminal (faults are listed under it, they do not fit a column). */
export function terminalTable(results: ScenarioResult[]): string {
  const cols: (keyof Row)[] = [
    "scenario",
    "operations",
    "acknowledged",
    "lost",
    "oversold",
    "duplicates",
    "verdict",
  ];
  const rows = [HEADERS, ...results.map(row)];
  const width = (c: keyof Row) => Math.max(...rows.map((r) => r[c].length));
  const line = (r: Row) => cols.map((c) => r[c].padEnd(width(c))).join("  ");
  return [
    line(HEADERS),
    cols.map((c) => "-".repeat(width(c))).join("  "),
    ...rows.slice(1).map(line),
    "",
    ...results.map((r) => `${r.name}: ${row(r).faults}`),
  ].join("\n");
}

export async function writeReport(
  dir: string,
  results: ScenarioResult[],
  meta: { size: Size; seed: number; startedAt: string; durationMs: number },
): Promise<{ md: string; json: string }> {
  await mkdir(dir, { recursive: true });
  const md = join(dir, "report.md");
  const json = join(dir, "report.json");
  const text = [
    "# Chaos report",
    "",
    `Run ${meta.startedAt}, size ${meta.size}, seed ${meta.seed}, ${Math.round(meta.durationMs / 1000)} s. ` +
      "Each scenario: a fresh local stack, one sale, the concurrent buy/pay/cancel workload under the faults, " +
      "then the history checker (chaos/checker.ts) on Redis and Postgres read directly.",
    "",
    markdownTable(results),
    "",
    "Columns: *lost* = acknowledged (202) reservations without their order, plus unknown buys whose " +
      "Idempotency-Key shows a reservation that has no order; *oversold* = units in live orders beyond the " +
      "stock; *duplicates* = orders no acknowledged or unknown buy explains, or a second order for one key.",
    "",
    ...results.flatMap((r) =>
      r.check && !r.check.ok
        ? [
            `## ${r.name}: violations`,
            "",
            ...r.check.violations
              .slice(0, 50)
              .map((v) => `- ${v.rule}: ${v.detail}${v.orderId ? ` (order ${v.orderId})` : ""}`),
            "",
          ]
        : [],
    ),
  ].join("\n");
  await writeFile(md, `${text}\n`);
  await writeFile(json, `${JSON.stringify({ ...meta, results }, null, 2)}\n`);
  return { md, json };
}

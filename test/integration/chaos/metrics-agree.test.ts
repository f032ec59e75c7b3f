import { describe, expect, it } from "vitest";
import type { CheckResult } from "../../../chaos/checker";
import type { Op } from "../../../chaos/history";
import { runScenario } from "../../../chaos/scenario";
import { qstashChaos } from "../../../chaos/scenarios/qstash-chaos";
import { parseExposition } from "../../support/exposition";
import { ADMIN_TOKEN } from "../../support/shopper";
import { testRuntime } from "../../support/test-runtime";

/**
 * After a chaos run (QStash dropping, duplicating and delaying deliveries under the shoppers' workload),
 * the engine's Prometheus counts agree with the history checker: every buy answer by its code, the units
 * admitted once each, nothing lost. A buy whose answer the shopper never got (a client timeout) may be
 * counted by the engine: each such buy widens the bound by one. Bun and Deno (Workers have no /metrics).
 */
const runtime = testRuntime();

describe(`on ${runtime}: the metrics after a chaos run`, () => {
  it("count the answers the shoppers got, by code, and the units admitted", {
    timeout: 180_000,
  }, async () => {
    let seen: { samples: Map<string, number>; ops: Op[]; check: CheckResult } | undefined;
    const result = await runScenario(qstashChaos, "ci", {
      log: () => undefined,
      inspect: async (app, ops, check) => {
        const res = await fetch(`${app.worker.url}/metrics`, {
          headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
        });
        seen = { samples: parseExposition(await res.text()), ops, check };
      },
    });
    expect(result.verdict, result.reason).toBe("pass");
    if (!seen) throw new Error("the run ended before its metrics were read");
    const { samples, ops, check } = seen;
    expect(check.figures.lost).toBe(0);

    const buys = ops.filter((op) => op.kind === "buy" && op.via === "api");
    const unknown = buys.filter((op) => op.outcome === "unknown").length;
    const byCode = new Map<string, number>();
    for (const op of buys) {
      if (op.outcome === "unknown") continue;
      const code = op.status === 202 ? "ADMITTED" : (op.code ?? `HTTP_${op.status}`);
      byCode.set(code, (byCode.get(code) ?? 0) + 1);
    }
    expect(byCode.get("ADMITTED")).toBeGreaterThan(10);
    expect(byCode.size, JSON.stringify([...byCode])).toBeGreaterThan(1);
    for (const [code, answered] of byCode) {
      const counted = samples.get(`flashsale_buy_outcomes_total{code="${code}"}`) ?? 0;
      expect(counted, code).toBeGreaterThanOrEqual(answered);
      expect(counted, code).toBeLessThanOrEqual(answered + unknown);
    }
    let counted = 0;
    for (const [name, value] of samples)
      if (name.startsWith("flashsale_buy_outcomes_total{")) counted += value;
    expect(counted).toBeLessThanOrEqual(buys.length);
    expect(counted).toBeGreaterThanOrEqual(buys.length - unknown);

    const units = samples.get("flashsale_admitted_units_total") ?? 0;
    const largest = Math.max(1, ...buys.map((op) => op.quantity ?? 1));
    expect(units).toBeGreaterThanOrEqual(check.figures.acknowledgedUnits);
    expect(units).toBeLessThanOrEqual(check.figures.acknowledgedUnits + unknown * largest);
  });
});

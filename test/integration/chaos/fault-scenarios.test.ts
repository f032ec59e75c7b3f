import { beforeAll, describe, expect, it } from "vitest";
import { runScenario } from "../../../chaos/scenario";
import { crashBeforePublish } from "../../../chaos/scenarios/crash-before-publish";
import { deliveriesFailing } from "../../../chaos/scenarios/postgres-outage";
import { qstashChaos } from "../../../chaos/scenarios/qstash-chaos";

/**
 * A CI-sized subset of `npm run chaos`: three fault scenarios, each on its own stack under the
 * concurrent workload, judged by the history checker (the waiting room's crowd: room-crowd.test.ts).
 * The full set and sizes: chaos/run.ts.
 */
const lines: string[] = [];
const log = (line: string) => lines.push(line);

beforeAll(() => {
  lines.length = 0;
});

describe("fault scenarios (CI size)", () => {
  for (const scenario of [qstashChaos, crashBeforePublish, deliveriesFailing]) {
    it(scenario.title, { timeout: 120_000 }, async () => {
      const result = await runScenario(scenario, "ci", { log });
      expect(result.verdict, lines.join("\n")).toBe("pass");
      expect(result.check?.violations).toEqual([]);
      expect(result.check?.figures.acknowledged).toBeGreaterThan(10);
    });
  }
});

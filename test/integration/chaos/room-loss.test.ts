import { beforeAll, describe, expect, it } from "vitest";
import { runScenario } from "../../../chaos/scenario";
import { roomLoss } from "../../../chaos/scenarios/room-loss";

/**
 * The waiting room's crowd through a Redis loss, from `npm run chaos` at CI size (600 shoppers for 20
 * units on Bun, Redis restarted empty mid-admission and the sale rebuilt by the sweep; about 40 s), on
 * its own stack, judged by the history checker, the room's rules and the loss's (chaos/room-loss-rules.ts).
 */
const lines: string[] = [];
const log = (line: string) => lines.push(line);

beforeAll(() => {
  lines.length = 0;
});

describe("the waiting room through a Redis loss (CI size)", () => {
  it(roomLoss.title, { timeout: 150_000 }, async () => {
    const result = await runScenario(roomLoss, "ci", { log });
    expect(result.verdict, lines.join("\n")).toBe("pass");
    expect(result.faults.join("\n")).toContain("Redis restarted empty");
    expect(result.check?.figures.acknowledged).toBeGreaterThan(10);
    console.info(result.faults.join("\n"));
  });
});

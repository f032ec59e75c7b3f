import { beforeAll, describe, expect, it } from "vitest";
import { runScenario } from "../../../chaos/scenario";
import { roomCrowd } from "../../../chaos/scenarios/room-crowd";

/**
 * The waiting room's crowd from `npm run chaos` at CI size (800 shoppers for 20 units on Bun, about
 * 25 s), on its own stack, judged by the history checker and by the room's own rules.
 */
const lines: string[] = [];
const log = (line: string) => lines.push(line);

beforeAll(() => {
  lines.length = 0;
});

describe("the waiting room under a crowd (CI size)", () => {
  it(roomCrowd.title, { timeout: 150_000 }, async () => {
    const result = await runScenario(roomCrowd, "ci", { log });
    expect(result.verdict, lines.join("\n")).toBe("pass");
    expect(result.check?.figures.acknowledged).toBeGreaterThan(10);
  });
});

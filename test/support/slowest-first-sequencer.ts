import { relative } from "node:path";
import { BaseSequencer, type TestSequencerConstructor, type TestSpecification } from "vitest/node";

/**
 * Orders the files of every project together, the longest first, so that no long file starts last and
 * holds the run up while the other workers have nothing left to do. A file's expected duration is the
 * seconds `seconds` gives it (keyed `project:path`), else a guess by kind: a browser file, an integration
 * file (it starts its own servers), a unit file. The same order on every machine: vitest's own cache of
 * durations is not used (it lives in node_modules and is missing on a fresh clone).
 *
 * The files that keep the CPU busy (`busy`: paths or folders, e.g. the browser tests, the fuzz, the
 * chaos scenarios) are spread evenly over the first five sixths of the run instead of starting together:
 * several at once starve the others, whose windows and timeouts then run out.
 *
 * @example
 * sequence: {
 *   sequencer: slowestFirst({
 *     seconds: { "workers:test/integration/api/fuzz.test.ts": 45 },
 *     busy: ["test/e2e/", "test/integration/api/fuzz.test.ts"],
 *   }),
 * },
 */
export function slowestFirst(opts: {
  seconds: Record<string, number>;
  busy: string[];
}): TestSequencerConstructor {
  return class SlowestFirst extends BaseSequencer {
    override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
      const keyOf = (spec: TestSpecification) =>
        `${spec.project.name}:${relative(this.ctx.config.root, spec.moduleId)}`;
      const expected = (spec: TestSpecification) => opts.seconds[keyOf(spec)] ?? guessSeconds(keyOf(spec));
      const isBusy = (spec: TestSpecification) => opts.busy.some((path) => keyOf(spec).includes(`:${path}`));
      const longestFirst = [...files].sort((a, b) => expected(b) - expected(a));
      const busy = longestFirst.filter(isBusy);
      const order = longestFirst.filter((spec) => !isBusy(spec));
      const step = (order.length * 5) / 6 / Math.max(busy.length, 1);
      busy.forEach((spec, i) => {
        order.splice(Math.round(i * step) + i, 0, spec);
      });
      return order;
    }
  };
}

function guessSeconds(key: string): number {
  if (key.includes(":test/e2e/")) return 30;
  if (key.includes(":test/integration/")) return 10;
  return 1;
}

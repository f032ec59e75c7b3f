import type { Reporter, TestModule } from "vitest/node";

/**
 * Prints the slowest test files at the end of a run, with their project (runtime) and how long each
 * took from its import to its last hook: where CI time goes, and which file to split or shorten next.
 *
 * @example
 * // vitest.config.ts
 * reporters: ["default", ["./test/support/slowest-files-reporter.ts", { count: 10 }]],
 */
export default class SlowestFilesReporter implements Reporter {
  private readonly count: number;

  /** `count`: how many files to print (default 10); vitest passes a reporter's options here. */
  constructor(options: { count?: number } = {}) {
    this.count = options.count ?? 10;
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const rows = testModules
      .map((module) => ({ module, ms: fileDuration(module) }))
      .filter(({ ms }) => ms > 0)
      .sort((a, b) => b.ms - a.ms)
      .slice(0, this.count);
    if (rows.length === 0) return;
    const width = Math.max(...rows.map(({ module }) => module.project.name.length));
    const lines = rows.map(
      ({ module, ms }) =>
        `  ${(ms / 1000).toFixed(1).padStart(6)} s  ${module.project.name.padEnd(width)}  ${module.relativeModuleId}`,
    );
    process.stdout.write(`\n Slowest ${rows.length} test files\n${lines.join("\n")}\n\n`);
  }
}

/** Import, setup and every test and hook of the file: its time in a worker. */
function fileDuration(module: TestModule): number {
  const d = module.diagnostic();
  return d.environmentSetupDuration + d.prepareDuration + d.setupDuration + d.collectDuration + d.duration;
}

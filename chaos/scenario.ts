/**
 * What a fault scenario is and how one runs: a fresh local stack and worker, one live sale, the
 * shopper workload with the scenario's faults injected alongside, the faults healed, the sale settled,
 * then the checker on the stores. Sizes: `ci` (seconds, for `npm test`) and `full` (`npm run chaos`).
 *
 * @example
 * const result = await runScenario(qstashChaos, "ci");
 * expect(result.check.violations).toEqual([]);
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type AppUnderTest, startApp } from "../test/support/app";
import { type CheckOptions, type CheckResult, checkSale, printCheck, type Violation } from "./checker";
import { type RecordingClient, recordingClient } from "./client";
import { History, type Op } from "./history";
import { settle } from "./settle";
import { runWorkload, type WorkloadOptions } from "./workload";

export type Size = "ci" | "full";

export type Sale = { saleId: string; productToken: string; [k: string]: unknown };

export type ScenarioContext = {
  app: AppUnderTest;
  sale: Sale;
  client: RecordingClient;
  history: History;
  size: Size;
  /** scale a duration: `ms(3_000, 15_000)` is 3 s in CI and 15 s in the full run */
  ms(ci: number, full: number): number;
  /** the shopper workload with this run's defaults; `overrides` may shorten it or change the mix */
  workload(overrides?: Partial<WorkloadOptions>): Promise<void>;
  /** records a fault as injected (shown in the report) */
  fault(description: string): void;
  /** records a violation the scenario itself observed (beside the checker's) */
  violation(detail: string): void;
  log(line: string): void;
};

export type Scenario = {
  name: string;
  title: string;
  /** worker settings besides the chaos defaults */
  vars?: Record<string, string>;
  /** sale definition overrides for a size */
  sale?: (size: Size) => Record<string, unknown>;
  checkOptions?: CheckOptions;
  /** a reason to skip (e.g. the feature it needs is not there yet), or null to run */
  skip?(): Promise<string | null>;
  /**
   * Starts the engine and what stands around it when the default (startApp with `vars`) will not do: a
   * server runtime behind proxies. Shoppers then call `shop` when given (a proxy's URL and a fetch that
   * trusts it); `stop` of the app must stop what this started.
   */
  start?(vars: Record<string, string>): Promise<{ app: AppUnderTest; shop?: Shop }>;
  /** how long a shopper waits for an answer (default 4 s; longer where 503s come late by design) */
  clientTimeoutMs?: number;
  run(ctx: ScenarioContext): Promise<void>;
};

/** Where shoppers reach the engine when a scenario puts something in front of it. */
type Shop = { url: string; fetch: typeof fetch };

/** The runtime of scenarios that need a server (TCP stores, a proxy in front): FLASH_RUNTIME, else Bun. */
export function serverRuntime(): "deno" | "bun" {
  return process.env.FLASH_RUNTIME === "deno" ? "deno" : "bun";
}

export type ScenarioResult = {
  name: string;
  title: string;
  verdict: "pass" | "FAIL" | "skipped" | "error";
  faults: string[];
  durationMs: number;
  settledMs: number;
  check?: CheckResult;
  reason?: string;
};

export const CHAOS_VARS = {
  RATE_LIMIT_USER_PER_WINDOW: "1000",
  RATE_LIMIT_IP_PER_WINDOW: "100000",
  SHOPPER_LIMIT_USER_PER_WINDOW: "1000",
  SHOPPER_LIMIT_IP_PER_WINDOW: "100000",
  OUTBOX_GRACE_SECONDS: "2",
};

type RunOptions = {
  log?: (line: string) => void;
  seed?: number;
  out?: string;
  /** reads the engine once the check is done, before it stops (its metrics, say) */
  inspect?: (app: AppUnderTest, ops: Op[], check: CheckResult) => Promise<void>;
};

/** What a run keeps beside the checker's verdict: the faults it injected and the violations it saw. */
type RunRecord = { faults: string[]; own: Violation[] };

export async function runScenario(
  scenario: Scenario,
  size: Size,
  opts: RunOptions = {},
): Promise<ScenarioResult> {
  const log = opts.log ?? ((line: string) => console.log(line));
  const started = Date.now();
  const base = { name: scenario.name, title: scenario.title, faults: [] as string[], settledMs: 0 };
  const record: RunRecord = { faults: base.faults, own: [] };
  const skip = await scenario.skip?.();
  if (skip) {
    log(`[${scenario.name}] skipped: ${skip}`);
    return { ...base, verdict: "skipped", durationMs: 0, reason: skip };
  }
  const vars = { ...CHAOS_VARS, ...scenario.vars };
  const { app, shop } = scenario.start ? await scenario.start(vars) : { app: await startApp({ vars }) };
  try {
    const sale = (await app.api.createSale({
      stock: size === "ci" ? 30 : 120,
      perUserLimit: 2,
      paymentWindowSeconds: 3,
      ...scenario.sale?.(size),
    })) as Sale;
    const ctx = scenarioContext(scenario, size, { app, shop }, sale, record, { ...opts, log });
    log(`[${scenario.name}] ${scenario.title} (${size})`);
    await scenario.run(ctx);
    const { settledMs } = await settle(app, sale.saleId, {
      timeoutMs: ctx.ms(60_000, 150_000),
      log: ctx.log,
    });
    const check = await checkSale(app, sale.saleId, ctx.history.toJSON(), scenario.checkOptions);
    check.violations.push(...record.own);
    check.ok = check.violations.length === 0;
    printCheck(check, ctx.log);
    await opts.inspect?.(app, ctx.history.toJSON(), check);
    if (opts.out) await writeHistory(opts.out, scenario.name, sale.saleId, ctx.history);
    return {
      ...base,
      verdict: check.ok ? "pass" : "FAIL",
      durationMs: Date.now() - started,
      settledMs,
      check,
    };
  } catch (error) {
    log(`[${scenario.name}] error: ${(error as Error).stack ?? error}`);
    return {
      ...base,
      verdict: "error",
      durationMs: Date.now() - started,
      reason: String((error as Error).message),
    };
  } finally {
    await app.stop();
  }
}

/** The scenario's view of its run: the app, the sale, a recording client, the workload, faults and violations. */
function scenarioContext(
  scenario: Scenario,
  size: Size,
  { app, shop }: { app: AppUnderTest; shop?: Shop | undefined },
  sale: Sale,
  record: RunRecord,
  opts: RunOptions & { log: (line: string) => void },
): ScenarioContext {
  const { log } = opts;
  const history = new History();
  const client = recordingClient(shop?.url ?? app.worker.url, history, {
    timeoutMs: scenario.clientTimeoutMs ?? 4_000,
    ...(shop ? { fetch: shop.fetch } : {}),
  });
  const ms = (ci: number, full: number) => (size === "ci" ? ci : full);
  return {
    app,
    sale,
    client,
    history,
    size,
    ms,
    workload: (overrides = {}) =>
      runWorkload(client, {
        productToken: sale.productToken,
        users: size === "ci" ? 40 : 150,
        durationMs: ms(6_000, 20_000),
        concurrency: size === "ci" ? 6 : 12,
        seed: opts.seed ?? 1,
        ...overrides,
      }),
    fault: (d) => {
      record.faults.push(d);
      log(`[${scenario.name}] fault: ${d}`);
    },
    log: (line) => log(`[${scenario.name}] ${line}`),
    violation: (detail) => {
      record.own.push({ rule: "scenario", detail });
      log(`[${scenario.name}] VIOLATION ${detail}`);
    },
  };
}

/** The run's history as `npm run chaos` keeps it (<out>/<scenario>.history.json, for chaos/check.ts). */
async function writeHistory(out: string, name: string, saleId: string, history: History): Promise<void> {
  await mkdir(out, { recursive: true });
  const file = join(out, `${name}.history.json`);
  await writeFile(file, JSON.stringify({ saleId, ops: history.toJSON() }));
}

/**
 * The orchestrator's side of the load generator: forks `load.ts` (through tsx) once, sends it plans,
 * prints its progress, and lets the caller act between the rush and the rest (`onPhaseEnd`).
 */
import { type ChildProcess, fork } from "node:child_process";
import { join } from "node:path";
import type { FromLoad, LoadPlan, LoadResult } from "./protocol";

type PhaseEnd = Extract<FromLoad, { type: "phase-end" }>;

export class LoadClient {
  private constructor(private readonly child: ChildProcess) {}

  static async start(): Promise<LoadClient> {
    const child = fork(join(import.meta.dirname, "load.ts"), [], {
      execArgv: ["--import", "tsx"],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    await new Promise<void>((resolve, reject) => {
      child.once("error", reject);
      child.once("exit", (code) => reject(new Error(`load generator exited early (${code})`)));
      child.once("message", () => resolve());
    });
    child.removeAllListeners("exit");
    return new LoadClient(child);
  }

  get pid(): number {
    return this.child.pid ?? 0;
  }

  /** Runs a plan; `onPhaseEnd` runs while the generator waits at the first SOLD_OUT (nothing in flight). */
  run(
    plan: LoadPlan,
    hooks: { onStart?: () => void; onPhaseEnd?: (m: PhaseEnd) => Promise<void>; quiet?: boolean } = {},
  ): Promise<LoadResult> {
    const progress = new Progress(plan.label, hooks.quiet ?? false);
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`load generator exited (${code})`));
      const onMessage = (m: FromLoad) => {
        if (m.type === "started") hooks.onStart?.();
        else if (m.type === "progress") progress.show(m);
        else if (m.type === "phase-end") {
          progress.note(`sold out: ${m.reservedOrders} orders, ${m.reservedUnits} units; reading counters`);
          void (hooks.onPhaseEnd?.(m) ?? Promise.resolve()).then(
            () => this.child.send({ type: "continue" }),
            (e: unknown) => finish(() => reject(e)),
          );
        } else if (m.type === "done") finish(() => resolve(m.result));
        else if (m.type === "error") finish(() => reject(new Error(m.message)));
      };
      const finish = (then: () => void) => {
        this.child.off("message", onMessage);
        this.child.off("exit", onExit);
        progress.end();
        then();
      };
      this.child.on("message", onMessage);
      this.child.once("exit", onExit);
      this.child.send({ type: "run", plan });
    });
  }

  stop(): void {
    if (this.child.exitCode === null) this.child.kill();
  }
}

/** One progress line: rewritten in place on a terminal, printed every 5 s otherwise. */
class Progress {
  private last = 0;
  private shown = false;
  constructor(
    private readonly label: string,
    private readonly quiet: boolean,
  ) {}

  show(m: Extract<FromLoad, { type: "progress" }>): void {
    if (this.quiet) return;
    const counts = Object.entries(m.counts)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k.replace(/^\d+ /, "")} ${v}`)
      .join(" · ");
    const line = `  ${this.label} · ${m.phase} ${fmt(m.done)}/${fmt(m.total)} · ${fmt(m.perSecond)}/s · in flight ${m.inFlight} · ${counts}`;
    if (process.stdout.isTTY) {
      process.stdout.write(`\r\x1b[K${line.slice(0, (process.stdout.columns || 120) - 1)}`);
      this.shown = true;
    } else if (Date.now() - this.last >= 5_000) {
      console.log(line);
      this.last = Date.now();
    }
  }

  note(text: string): void {
    if (this.quiet) return;
    this.end();
    console.log(`  ${this.label} · ${text}`);
  }

  end(): void {
    if (this.shown) process.stdout.write("\r\x1b[K");
    this.shown = false;
  }
}

const fmt = (n: number) => n.toLocaleString("en-US");

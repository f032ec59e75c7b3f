/**
 * The orchestrator's side of the realtime phase's client process (`realtime-load.ts`, forked so that
 * 10,000 sockets never share an event loop with the bench): one request/answer pair per message.
 */
import { type ChildProcess, fork } from "node:child_process";
import { join } from "node:path";
import type { ToRealtimeLoad } from "./realtime-load";

/** The forked client process: one request/answer pair per message. */
export class RealtimeClients {
  private constructor(private readonly child: ChildProcess) {}
  get pid(): number {
    return this.child.pid ?? 0;
  }
  static async start(): Promise<RealtimeClients> {
    const child = fork(join(import.meta.dirname, "realtime-load.ts"), [], {
      execArgv: ["--import", "tsx", "--max-old-space-size=2048"],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    await new Promise((resolve, reject) => {
      child.once("message", resolve);
      child.once("exit", (code) => reject(new Error(`realtime clients exited (${code})`)));
    });
    child.removeAllListeners("exit");
    return new RealtimeClients(child);
  }
  ask<T>(m: ToRealtimeLoad): Promise<T> {
    return new Promise((resolve, reject) => {
      this.child.once("message", (r: { type: string; message?: string }) =>
        r.type === "error" ? reject(new Error(r.message)) : resolve(r as T),
      );
      this.child.send(m);
    });
  }
  stop(): void {
    if (this.child.exitCode === null) this.child.kill();
  }
}

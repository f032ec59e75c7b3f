/**
 * The orchestrator's side of a forked client process (`realtime-load.ts`, `room-load.ts`: forked so that
 * 10,000 sockets and a crowd never share an event loop with the bench): one request/answer pair per
 * message, `M` the messages that process takes.
 *
 * @example
 * const clients = await ForkedClients.start<ToRoomLoad>("room-load.ts", "room clients");
 * const answer = await clients.ask<{ type: "done" }>({ type: "watch", … });
 */
import { type ChildProcess, fork, type Serializable } from "node:child_process";
import { join } from "node:path";

export class ForkedClients<M extends Serializable> {
  private constructor(private readonly child: ChildProcess) {}
  get pid(): number {
    return this.child.pid ?? 0;
  }
  /** Forks `script` (a file beside this one) and resolves once it says it is ready. */
  static async start<M extends Serializable>(script: string, name: string): Promise<ForkedClients<M>> {
    const child = fork(join(import.meta.dirname, script), [], {
      execArgv: ["--import", "tsx", "--max-old-space-size=2048"],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    await new Promise((resolve, reject) => {
      child.once("message", resolve);
      child.once("exit", (code) => reject(new Error(`${name} exited (${code})`)));
    });
    child.removeAllListeners("exit");
    return new ForkedClients<M>(child);
  }
  ask<T>(m: M): Promise<T> {
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

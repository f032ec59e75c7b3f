/**
 * The orchestrator's side of a room phase's client process (`room-load.ts`, forked so that
 * 10,000 sockets and a crowd never share an event loop with the bench): one request/answer pair per message.
 */
import { type ChildProcess, fork } from "node:child_process";
import { join } from "node:path";
import type { ToRoomLoad } from "./room-load";

/** The forked client process: one request/answer pair per message. */
export class RoomClients {
  private constructor(private readonly child: ChildProcess) {}
  get pid(): number {
    return this.child.pid ?? 0;
  }
  static async start(): Promise<RoomClients> {
    const child = fork(join(import.meta.dirname, "room-load.ts"), [], {
      execArgv: ["--import", "tsx", "--max-old-space-size=2048"],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    await new Promise((resolve, reject) => {
      child.once("message", resolve);
      child.once("exit", (code) => reject(new Error(`room clients exited (${code})`)));
    });
    child.removeAllListeners("exit");
    return new RoomClients(child);
  }
  ask<T>(m: ToRoomLoad): Promise<T> {
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

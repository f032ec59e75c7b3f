/** Child processes the bench forks through tsx (the naive server, the direct Postgres hot-row run), and their stop. */
import { type ChildProcess, fork } from "node:child_process";
import { join } from "node:path";

function forkTs(file: string, env: Record<string, string>): ChildProcess {
  return fork(join(import.meta.dirname, file), [], {
    execArgv: ["--import", "tsx"],
    env: { ...process.env, ...env },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
}

/** The first IPC message of `child` of type `type` (rejects if it exits first or reports an error). */
function message<T>(child: ChildProcess, type: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`child exited (${code}) before "${type}"`));
    child.once("exit", onExit);
    child.on("message", function onMessage(m: { type?: string; message?: string }) {
      if (m.type === "error") reject(new Error(m.message));
      if (m.type !== type && m.type !== "error") return;
      child.off("message", onMessage);
      child.off("exit", onExit);
      resolve(m as T);
    });
  });
}

export type NaiveServer = { url: string; pid: number; stop(): Promise<void> };

export async function startNaive(databaseUrl: string, jwtSecret: string, pool: number): Promise<NaiveServer> {
  const child = forkTs("naive-server.ts", {
    NAIVE_DATABASE_URL: databaseUrl,
    JWT_SECRET: jwtSecret,
    NAIVE_POOL: String(pool),
  });
  const { port } = await message<{ port: number }>(child, "listening");
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid ?? 0,
    stop: () => stopChild(child),
  };
}

/** SIGTERM to `child`, resolved once it has exited (at once if it already had). */
export function stopChild(child: ChildProcess): Promise<void> {
  return new Promise<void>((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

export async function runHotRow<T>(databaseUrl: string, clients: number, ms: number): Promise<T> {
  const child = forkTs("pg-hot-row.ts", {
    NAIVE_DATABASE_URL: databaseUrl,
    HOT_ROW_CLIENTS: String(clients),
    HOT_ROW_MS: String(ms),
  });
  const { result } = await message<{ result: T }>(child, "done");
  return result;
}

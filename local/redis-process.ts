/**
 * A private `redis-server` (Debian's package) for the local stack and the tests.
 *
 * It listens on 127.0.0.1 only, keeps nothing on disk (`--save "" --appendonly no`) and works in its own
 * directory. `restart({ empty: true })` is the "failover lost everything" case: SIGKILL, then a fresh
 * server on the same port with no data. `restart({ empty: false })` saves a snapshot first, so the data
 * comes back. `kill()` leaves it down until `restart()`.
 *
 * @example
 * const redis = await startRedis({ port: 0 });
 * // ... redis.url is redis://127.0.0.1:PORT
 * await redis.restart({ empty: true });
 * await redis.stop();
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LOOPBACK, portOrFree, waitFor } from "./ports";

export type RedisProcessOptions = {
  /** 0 or absent: a free port. */
  port?: number;
  /** Working directory; absent: a temporary one, removed by `stop()`. */
  dir?: string;
  /** Path of the binary; default `$REDIS_SERVER_BIN` or /usr/bin/redis-server. */
  binary?: string;
  /** More settings for the server, e.g. `["--cluster-enabled", "yes"]`. */
  args?: string[];
};

export type RedisProcess = {
  port: number;
  url: string;
  dir: string;
  /** Graceful shutdown; the server stays down. */
  stop(): Promise<void>;
  /** SIGKILL, as a crash would; the server stays down until `restart()`. */
  kill(): Promise<void>;
  /** Kills the server (if running) and starts it again on the same port, with or without its data. */
  restart(options: { empty: boolean }): Promise<void>;
};

/** Thrown when the redis-server binary is not installed. */
export class RedisNotInstalledError extends Error {
  constructor(binary: string) {
    super(`redis-server not found at ${binary}. Install it with: apt-get install -y redis-server`);
    this.name = "RedisNotInstalledError";
  }
}

/** Starts a redis-server and resolves once it answers PING. */
export async function startRedis(options: RedisProcessOptions = {}): Promise<RedisProcess> {
  const binary = options.binary ?? process.env.REDIS_SERVER_BIN ?? "/usr/bin/redis-server";
  if (!existsSync(binary)) throw new RedisNotInstalledError(binary);
  const port = await portOrFree(options.port);
  const ownDir = options.dir === undefined;
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), "flashsale-redis-")));
  await mkdir(dir, { recursive: true });

  let child: ChildProcess | undefined;

  const launch = async (): Promise<void> => {
    const args = [
      "--port",
      String(port),
      "--bind",
      LOOPBACK,
      "--dir",
      dir,
      "--save",
      "",
      "--appendonly",
      "no",
      ...(options.args ?? []),
    ];
    const proc = spawn(binary, [...args, "--daemonize", "no", "--logfile", ""], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    child = proc;
    // Never outlive this process, even when it exits without calling stop().
    const reap = () => proc.kill("SIGKILL");
    process.once("exit", reap);
    proc.once("exit", () => process.off("exit", reap));
    let output = "";
    const collect = (chunk: Buffer) => {
      output = (output + chunk.toString("utf8")).slice(-2_000);
    };
    proc.stdout?.on("data", collect);
    proc.stderr?.on("data", collect);
    const exited = new Promise<never>((_, reject) => {
      proc.once("exit", (code, signal) =>
        reject(new Error(`redis-server exited early (code ${code}, signal ${signal}): ${output.trim()}`)),
      );
    });
    exited.catch(() => undefined);
    await Promise.race([
      exited,
      waitFor(async () => (await command(port, "PING")) === "+PONG", { what: "redis PING" }),
    ]);
  };

  const terminate = async (signal: NodeJS.Signals): Promise<void> => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      proc.once("exit", () => resolve());
      proc.kill(signal);
    });
  };

  await launch();
  return {
    port,
    url: `redis://${LOOPBACK}:${port}`,
    dir,
    async stop() {
      await terminate("SIGTERM");
      if (ownDir) await rm(dir, { recursive: true, force: true });
    },
    kill: () => terminate("SIGKILL"),
    async restart({ empty }) {
      if (!empty && child) await command(port, "SAVE");
      await terminate("SIGKILL");
      if (empty) await rm(join(dir, "dump.rdb"), { force: true });
      await launch();
    },
  };
}

/** Sends one inline command over a raw socket and resolves with the first reply line (e.g. "+PONG"). */
export function command(port: number, ...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: LOOPBACK, port });
    let reply = "";
    socket.setTimeout(5_000, () => {
      socket.destroy();
      reject(new Error(`redis at port ${port} did not answer ${args[0]}`));
    });
    socket.once("error", reject);
    socket.once("connect", () => {
      socket.write(`*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join("")}`);
    });
    socket.on("data", (chunk) => {
      reply += chunk.toString("utf8");
      const end = reply.indexOf("\r\n");
      if (end >= 0) {
        socket.end();
        resolve(reply.slice(0, end));
      }
    });
  });
}

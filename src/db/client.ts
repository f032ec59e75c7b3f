import { neon, neonConfig } from "@neondatabase/serverless";
import { drizzle } from "drizzle-orm/neon-http";
import type { Config } from "../env";
import { StoreUnavailableError } from "../errors";
import * as schema from "./schema";

export type Db = ReturnType<typeof createDb>;

function createDb(config: Config) {
  if (config.NEON_HTTP_ENDPOINT) {
    const endpoint = config.NEON_HTTP_ENDPOINT;
    neonConfig.fetchEndpoint = () => endpoint;
  }
  const client = neon(config.DATABASE_URL);
  return Object.assign(drizzle({ client, schema }), { neon: client });
}

const clients = new Map<string, Db>();

/**
 * The isolate's drizzle client over Neon's SQL-over-HTTP driver: one HTTP request per statement, no
 * connection to hold. Locally NEON_HTTP_ENDPOINT points the driver at local/neon-http-server.ts.
 */
export function dbClient(config: Config): Db {
  let db = clients.get(config.DATABASE_URL);
  if (!db) {
    db = createDb(config);
    clients.set(config.DATABASE_URL, db);
  }
  return db;
}

const CONNECTIVITY = /fetch failed|ECONNREFUSED|network|connection|timeout|terminat|5\d\d/i;

/** SQLSTATE classes that mean the database, not the statement, is the problem (08, 53, 57). */
function isUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  if (typeof code === "string" && /^(08|53|57)/.test(code)) return true;
  if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) return false;
  return CONNECTIVITY.test(String((error as Error)?.message ?? error));
}

/**
 * Runs a database call; connectivity failures become {@link StoreUnavailableError} (503 with
 * Retry-After). Statement errors (constraint violations) propagate as they are.
 */
export async function withDb<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (isUnavailable(error)) throw new StoreUnavailableError("postgres", error);
    throw error;
  }
}

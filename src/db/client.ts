import { DatabaseRefusedError, StoreUnavailableError } from "../errors";
import type { SqlStore } from "./sql-store";

/** The database, whichever driver is below it (src/db/sql-store.ts; chosen in src/runtime/create-services.ts). */
export type Db = SqlStore;

/** The SQLSTATE of a database error, looking through wrappers (drizzle's DrizzleQueryError → cause). */
function sqlState(error: unknown): string | null {
  for (let e = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) return code;
  }
  return null;
}

/**
 * Runs a database call and classifies what fails: SQLSTATE classes 08, 53, 57 and errors without a
 * SQLSTATE (the HTTP request to the database failed) become {@link StoreUnavailableError} (503 with
 * Retry-After); integrity violations (class 23) and data exceptions (class 22, e.g. a number out of
 * range) are the request's fault: {@link DatabaseRefusedError} (409 CONFLICT and 400 INVALID_REQUEST at
 * the edge). Nothing was written in any case (each call is one statement or one transaction).
 */
export async function withDb<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const state = sqlState(error);
    if (state?.startsWith("23")) throw new DatabaseRefusedError("conflict", state, error);
    if (state?.startsWith("22")) throw new DatabaseRefusedError("bad_value", state, error);
    if (state === null || /^(08|53|57)/.test(state)) throw new StoreUnavailableError("postgres", error);
    throw error;
  }
}

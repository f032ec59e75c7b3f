/**
 * The infrastructure's failures, as named errors: what the domain throws when a store fails it. The
 * HTTP edge turns them into the contract's answers (`toApiError`, src/http/api-error.ts).
 */

/** A store (Redis, Postgres, QStash) could not be reached or failed: always a 503 with Retry-After. */
export class StoreUnavailableError extends Error {
  override name = "StoreUnavailableError";
  constructor(
    readonly store: "redis" | "postgres" | "qstash" | "payments",
    cause: unknown,
  ) {
    super(`${store} unavailable`, { cause });
  }
}

/**
 * The catalog lists a sale that Redis does not hold: lost with its store (a Cluster master restarted
 * empty while the catalog lives on another) until a recovery rebuilds it. A 503 with Retry-After, never
 * "no such sale"; the app's error handler starts the recovery.
 */
export class SaleLostError extends StoreUnavailableError {
  override name = "SaleLostError";
  constructor(readonly saleId: string) {
    super("redis", `sale ${saleId} is listed but not in Redis`);
  }
}

/**
 * Postgres refused what a statement asked (SQLSTATE class 23: an integrity violation, `conflict`; class
 * 22: a data exception such as a number out of range, `bad_value`): the request's fault, nothing was
 * written. Thrown by `withDb` (src/db/client.ts); `toApiError` (src/http/api-error.ts) answers 409
 * CONFLICT and 400 INVALID_REQUEST.
 */
export class DatabaseRefusedError extends Error {
  override name = "DatabaseRefusedError";
  constructor(
    readonly reason: "conflict" | "bad_value",
    readonly sqlState: string,
    cause: unknown,
  ) {
    super(`postgres refused the statement (${sqlState})`, { cause });
  }
}

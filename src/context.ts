import type { Context } from "hono";
import type { Operator } from "./env";
import type { Deps } from "./services";

export type { Deps } from "./services";

/** What shopper auth sets (src/middleware/shopper-auth.ts): the token's subject. */
export type ShopperVariables = { userId: string };

/** What the QStash signature check sets (src/middleware/qstash-signature.ts): the verified raw body. */
export type SignedJobVariables = { jobBody: string };

/**
 * What the app sets on every request (src/app.ts): the deps, the client as per-address counts key it
 * (src/limits/client-key.ts), the request's id (`X-Request-Id`, src/http/request-id.ts) and its error code, if any.
 */
export type RequestVariables = {
  deps: Deps;
  clientIp: string | undefined;
  requestId: string;
  /** the code of the error the request was answered with, for its log line */
  errorCode?: string;
};

/** What operator auth sets (src/middleware/admin-auth.ts): the operator's name and role. */
export type OperatorVariables = { operator: Operator };

/** The Hono environment of this app: per-request variables (the bindings are the runtime entry's business). */
export type AppEnv = {
  Variables: ShopperVariables & SignedJobVariables & OperatorVariables & RequestVariables;
};
export type AppContext = Context<AppEnv>;

/**
 * What a route needs: the services (config, Redis, database, QStash), the request's clock reading and
 * where its background work goes (`waitUntil` on Workers, the process's task set on Deno and Bun).
 */
export function deps(c: AppContext): Deps {
  return c.get("deps");
}

/** The settings, for middleware written against any context (auth, signatures). */
export function configOf(c: Context): Deps["config"] {
  return (c as AppContext).get("deps").config;
}

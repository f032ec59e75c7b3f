import type { Context } from "hono";
import type { SignedJobVariables } from "./middleware/qstash-signature";
import type { ShopperVariables } from "./middleware/shopper-auth";
import type { Deps } from "./services";

export type { Deps } from "./services";

/** What the app sets on every request (src/app.ts): the deps, and the client's address as the platform gives it. */
export type RequestVariables = { deps: Deps; clientIp: string | undefined };

/** The Hono environment of this app: per-request variables (the bindings are the runtime entry's business). */
export type AppEnv = { Variables: ShopperVariables & SignedJobVariables & RequestVariables };
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

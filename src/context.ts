import type { Context } from "hono";
import { dbClient } from "./db/client";
import { type Env, readConfig } from "./env";
import type { SignedJobVariables } from "./middleware/qstash-signature";
import type { ShopperVariables } from "./middleware/shopper-auth";
import { redisClient } from "./redis";

/** The Hono environment of this app: bindings plus per-request variables set by middleware. */
export type AppEnv = { Bindings: Env; Variables: ShopperVariables & SignedJobVariables };
export type AppContext = Context<AppEnv>;

/**
 * What a route needs, built from the request's bindings: validated config, the isolate's Redis client,
 * a database handle, the request's clock reading and `waitUntil`.
 */
export function deps(c: AppContext) {
  const config = readConfig(c.env);
  return {
    config,
    redis: redisClient(config),
    db: dbClient(config),
    now: Date.now(),
    defer: (p: Promise<unknown>) => c.executionCtx.waitUntil(p.catch((e) => console.error("background", e))),
  };
}

export type Deps = ReturnType<typeof deps>;

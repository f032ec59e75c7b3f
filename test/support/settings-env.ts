import { exampleSecrets } from "../../local/worker-runtime";
import type { Env } from "../../src/env";

/**
 * Settings that parse (the example secrets, a TCP Redis, a database, a loopback public URL) with `vars`
 * over them, for tests of one setting's rules; a var given as `undefined` is left out.
 *
 * @example
 * expect(() => readConfig(settingsWith({ REDIS_REPLICA_ACKS: "-1" }))).toThrow(/REDIS_REPLICA_ACKS/);
 */
export function settingsWith(vars: Record<string, string | undefined> = {}): Env {
  const all: Record<string, string | undefined> = {
    ...exampleSecrets(),
    REDIS_URL: "redis://127.0.0.1:6379",
    DATABASE_URL: "postgres://localhost/flash",
    PUBLIC_URL: "http://localhost:8787",
    ...vars,
  };
  return Object.fromEntries(Object.entries(all).filter(([, v]) => v !== undefined)) as unknown as Env;
}

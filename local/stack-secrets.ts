/** The stand-ins' tokens and signing keys: the dev stack's from `.dev.vars`, a test stack's random. */
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { readVarsFile } from "./vars-file";

const root = resolve(import.meta.dirname, "..");

/** The secrets a stack's worker needs to talk to the stand-ins (part of its StackVars). */
export type Secrets = {
  UPSTASH_REDIS_REST_TOKEN: string;
  QSTASH_TOKEN: string;
  QSTASH_CURRENT_SIGNING_KEY: string;
  QSTASH_NEXT_SIGNING_KEY: string;
  STRIPE_SECRET_KEY: string;
  STRIPE_WEBHOOK_SECRET: string;
};

/** Tokens and keys from `.dev.vars` (what `wrangler dev` reads), else `.dev.vars.example`. */
export function devSecrets(): Secrets {
  const file = [".dev.vars", ".dev.vars.example"].map((f) => join(root, f)).find((f) => existsSync(f));
  const vars: Record<string, string> = file ? readVarsFile(file) : {};
  return {
    UPSTASH_REDIS_REST_TOKEN: vars.UPSTASH_REDIS_REST_TOKEN ?? "local-upstash-token",
    QSTASH_TOKEN: vars.QSTASH_TOKEN ?? "local-qstash-token",
    QSTASH_CURRENT_SIGNING_KEY: vars.QSTASH_CURRENT_SIGNING_KEY ?? "sig_local_current_signing_key",
    QSTASH_NEXT_SIGNING_KEY: vars.QSTASH_NEXT_SIGNING_KEY ?? "sig_local_next_signing_key",
    STRIPE_SECRET_KEY: vars.STRIPE_SECRET_KEY ?? "sk_test_local_stripe_stand_in",
    STRIPE_WEBHOOK_SECRET: vars.STRIPE_WEBHOOK_SECRET ?? "whsec_local_stripe_stand_in",
  };
}

/** Fresh random tokens and keys for one test stack. */
export function testSecrets(): Secrets {
  const id = () => randomUUID().replaceAll("-", "");
  return {
    UPSTASH_REDIS_REST_TOKEN: `test-upstash-${id()}`,
    QSTASH_TOKEN: `test-qstash-${id()}`,
    QSTASH_CURRENT_SIGNING_KEY: `sig_test_current_${id()}`,
    QSTASH_NEXT_SIGNING_KEY: `sig_test_next_${id()}`,
    STRIPE_SECRET_KEY: `sk_test_${id()}`,
    STRIPE_WEBHOOK_SECRET: `whsec_${id()}`,
  };
}

/**
 * `npx tsx bench/shopper-tokens.ts`: the CPU of checking one shopper token in this process (Node), per
 * way of signing in, in the same run: HS256 alone (no key set named), HS256 beside a key set (the header
 * is read to pick the check), and RS256 / ES256 / EdDSA against a key set served locally and already
 * fetched. Prints microseconds per check (median of five rounds). Read the ratios, not the absolute figures.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Config } from "../src/env";
import type { Memory } from "../src/memory/memory";
import { authenticateShopper } from "../src/middleware/shopper-auth";
import { idpKey, idpToken } from "../test/support/jwks-server";
import { JWT_SECRET, shopperToken } from "../test/support/shopper";

const ROUNDS = 5;
const CHECKS = 5_000;
const ISSUER = "https://idp.bench/";
const AUDIENCE = "bench";

const keys = await Promise.all([idpKey("RS256", "rs"), idpKey("ES256", "es"), idpKey("EdDSA", "ed")]);
const server = createServer((_, res) => res.end(JSON.stringify({ keys: keys.map((k) => k.jwk) })));
await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
const jwksUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`;

const base = { JWT_SECRET, JWT_JWKS_CACHE_SECONDS: 600, JWT_JWKS_COOLDOWN_SECONDS: 30 };
const withSet = { ...base, JWT_JWKS_URL: jwksUrl, JWT_ISSUER: ISSUER, JWT_AUDIENCE: AUDIENCE };
const deps = (config: object) => ({
  config: config as Config,
  memory: { keySets: new Map() } as unknown as Memory,
});
const claims = { sub: "bench-user", iss: ISSUER, aud: AUDIENCE };
const [rs, es, ed] = keys as [(typeof keys)[0], (typeof keys)[0], (typeof keys)[0]];
const cases: [string, ReturnType<typeof deps>, string][] = [
  ["HS256, no key set", deps(base), await shopperToken("bench-user")],
  ["HS256 beside a key set", deps(withSet), await shopperToken("bench-user", { claims })],
  ["RS256 (key set)", deps(withSet), await idpToken(rs, claims)],
  ["ES256 (key set)", deps(withSet), await idpToken(es, claims)],
  ["EdDSA (key set)", deps(withSet), await idpToken(ed, claims)],
];

const rows: Record<string, string>[] = [];
for (const [name, d, token] of cases) {
  const header = `Bearer ${token}`;
  for (let i = 0; i < 200; i++) await authenticateShopper(header, d);
  const rounds: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < CHECKS; i++) await authenticateShopper(header, d);
    rounds.push(Number(process.hrtime.bigint() - start) / 1000 / CHECKS);
  }
  rounds.sort((a, b) => a - b);
  rows.push({ check: name, "µs per token (median)": (rounds[2] as number).toFixed(1) });
}
console.table(rows);
server.close();

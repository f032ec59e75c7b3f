import { createHmac } from "node:crypto";
import { exportSPKI, importJWK } from "jose";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { newOrderId, newSaleId } from "../../../src/ids";
import { type AppUnderTest, startApp } from "../../support/app";
import { type IdpKey, idpKey, idpToken, startJwksServer } from "../../support/jwks-server";
import { JWT_SECRET, shopperToken, unsignedToken } from "../../support/shopper";

/**
 * Issue 18 item 3 (contract, Identity): shoppers sign in with the shop's own tokens. With JWT_JWKS_URL set,
 * RS256 / ES256 / EdDSA tokens are verified against a real JWKS server (keys made by jose), `iss` and `aud`
 * required; HS256 with JWT_SECRET keeps working; the header's `alg` picks the check, never both (no
 * algorithm confusion); rotation is followed; a key set that cannot be read is 503 unless keys are in hand.
 */
const ISSUER = "https://idp.example.test/";
const AUDIENCE = "flash-sale-test";
const COOLDOWN_SECONDS = 2;
const CACHE_SECONDS = 4;

let jwks: Awaited<ReturnType<typeof startJwksServer>>;
let app: AppUnderTest;
let rsa: IdpKey;
let ec: IdpKey;
let ed: IdpKey;

beforeAll(async () => {
  jwks = await startJwksServer();
  [rsa, ec, ed] = await Promise.all([
    idpKey("RS256", "rsa-1"),
    idpKey("ES256", "ec-1"),
    idpKey("EdDSA", "ed-1"),
  ]);
  app = await startApp({
    vars: {
      JWT_JWKS_URL: jwks.url,
      JWT_ISSUER: ISSUER,
      JWT_AUDIENCE: AUDIENCE,
      JWT_JWKS_COOLDOWN_SECONDS: String(COOLDOWN_SECONDS),
      JWT_JWKS_CACHE_SECONDS: String(CACHE_SECONDS),
      SHOPPER_LIMIT_USER_PER_WINDOW: "10000",
      SHOPPER_LIMIT_IP_PER_WINDOW: "100000",
      RATE_LIMIT_USER_PER_WINDOW: "1000",
      RATE_LIMIT_IP_PER_WINDOW: "100000",
    },
  });
});
afterAll(async () => {
  await app?.stop();
  await jwks?.stop();
});
afterEach(() => {
  jwks.state.down = false;
  jwks.state.delayMs = 0;
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let users = 0;
const claims = (extra: Record<string, unknown> = {}) => ({
  sub: `idp-user-${++users}`,
  iss: ISSUER,
  aud: AUDIENCE,
  ...extra,
});

/** Reads an order that does not exist: 404 UNKNOWN_ORDER means the token passed, 401 that it did not. */
async function signIn(token: string) {
  const res = await app.api.call<{ error: { code: string } }>(
    "GET",
    `/api/orders/${newOrderId(newSaleId())}`,
    {
      token,
    },
  );
  return { status: res.status, code: res.body.error?.code, retryAfter: res.headers.get("Retry-After") };
}
const ACCEPTED = { status: 404, code: "UNKNOWN_ORDER", retryAfter: null };
const REFUSED = { status: 401, code: "UNAUTHENTICATED", retryAfter: null };

/** A token with any header, HMAC-SHA256-signed with `secret` (what an attacker can make). */
function hmacToken(
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
  secret: string | Buffer,
) {
  const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
  const input = `${b64(header)}.${b64(payload)}`;
  return `${input}.${createHmac("sha256", secret).update(input).digest("base64url")}`;
}
const exp = () => Math.floor(Date.now() / 1000) + 3600;

describe("shopper tokens from the shop's key set (JWKS)", () => {
  it("answers 503 UNAVAILABLE with Retry-After, not 401, while the key set cannot be read and no key is in hand", async () => {
    jwks.state.down = true;
    try {
      // the tokens made first: the next requests must come within the engine's 2 s of the failed read
      const first = await idpToken(rsa, claims());
      const next = await Promise.all(Array.from({ length: 5 }, () => idpToken(ec, claims())));
      const res = await signIn(first);
      expect(res.status).toBe(503);
      expect(res.code).toBe("UNAVAILABLE");
      expect(Number(res.retryAfter)).toBeGreaterThanOrEqual(1);
      // the next requests do not each read the key set again: 503 at once, at most one read per 2 s
      // (a loaded machine may take longer than that between the two)
      const reads = jwks.state.reads;
      const from = Date.now();
      for (const answer of await Promise.all(next.map(signIn))) expect(answer.status).toBe(503);
      expect(jwks.state.reads - reads).toBeLessThanOrEqual(Math.floor((Date.now() - from) / 2_000) + 1);
      expect(jwks.state.reads - reads).toBeLessThan(next.length);
      // a token that no key set could ever accept is still 401 (it is not checked against the key set)
      expect(await signIn(unsignedToken("mallory"))).toEqual(REFUSED);
    } finally {
      jwks.state.down = false;
    }
  });

  it("accepts RS256, ES256 and EdDSA tokens, many at once while the keys are first read (slowly), and HS256 with the secret", async () => {
    jwks.publish(rsa, ec, ed);
    jwks.state.delayMs = 300;
    await sleep(COOLDOWN_SECONDS * 1000 + 100);
    const tokens = await Promise.all(
      Array.from({ length: 24 }, (_, i) => idpToken([rsa, ec, ed][i % 3] as IdpKey, claims())),
    );
    // on workerd, each request must read with its own I/O (no request awaits another's fetch)
    const answers = await Promise.all(tokens.map(signIn));
    expect(answers).toEqual(tokens.map(() => ACCEPTED));
    jwks.state.delayMs = 0;
    const hs = await shopperToken("hs-user", { claims: { iss: ISSUER, aud: AUDIENCE } });
    expect(await signIn(hs)).toEqual(ACCEPTED);

    const sale = await app.api.createSale({ stock: 5 });
    const buy = await app.api.call("POST", `/api/buy/${sale.productToken}`, {
      token: await idpToken(ed, claims({ sub: "ed-buyer" })),
    });
    expect(buy.status).toBe(202);
    const order = await app.api.call("GET", `/api/orders/${buy.body.orderId}`, {
      token: await idpToken(ec, claims({ sub: "ed-buyer" })),
    });
    expect(order.status).toBe(200);
  });

  it("refuses a wrong or missing iss or aud, a missing exp or sub, an expired token, a key not in the set", async () => {
    const impostor = await idpKey("RS256", rsa.kid);
    const now = Math.floor(Date.now() / 1000);
    const bad = [
      await idpToken(rsa, claims({ iss: "https://evil.example.test/" })),
      await idpToken(rsa, claims({ aud: "another-api" })),
      await idpToken(ec, claims({ iss: undefined })),
      await idpToken(ec, claims({ aud: undefined })),
      await idpToken(ed, claims({ exp: undefined })),
      await idpToken(ed, claims({ sub: undefined })),
      await idpToken(ed, claims({ sub: "" })),
      await idpToken(rsa, claims({ iat: now - 7200, exp: now - 60 })),
      await idpToken(rsa, claims({ nbf: now + 600 })),
      await idpToken(impostor, claims()),
      // HS256 with the right secret but without the issuer and audience the settings require
      await shopperToken("hs-no-iss"),
      await shopperToken("hs-wrong-secret", { secret: "not-the-secret-at-all", claims: claims() }),
    ];
    for (const token of bad) expect(await signIn(token)).toEqual(REFUSED);
  });

  it("never checks an HS256 token against a key of the set, nor an asymmetric one with the secret", async () => {
    const pem = await exportSPKI((await importJWK(rsa.jwk, rsa.alg, { extractable: true })) as CryptoKey);
    const payload = { ...claims(), exp: exp() };
    const confused = [
      // HS256 keyed with the public key's bytes (PEM, and the JWK's modulus), naming the RSA key
      hmacToken({ alg: "HS256", typ: "JWT", kid: rsa.kid }, payload, pem),
      hmacToken(
        { alg: "HS256", typ: "JWT", kid: rsa.kid },
        payload,
        Buffer.from(rsa.jwk.n as string, "base64url"),
      ),
      hmacToken({ alg: "HS256", typ: "JWT", kid: ec.kid }, payload, JSON.stringify(ec.jwk)),
      // an asymmetric alg in the header, HMAC-signed with the (right) shared secret
      hmacToken({ alg: "RS256", typ: "JWT", kid: rsa.kid }, payload, JWT_SECRET),
      hmacToken({ alg: "ES256", typ: "JWT", kid: ec.kid }, payload, JWT_SECRET),
      // alg none, with and without a kid; an alg outside the three; an alg that does not fit the key
      `${Buffer.from(JSON.stringify({ alg: "none", kid: rsa.kid })).toString("base64url")}.${Buffer.from(JSON.stringify(payload)).toString("base64url")}.`,
      unsignedToken("mallory"),
      hmacToken({ alg: "HS512", typ: "JWT" }, payload, JWT_SECRET),
      hmacToken({ alg: "ES256", typ: "JWT", kid: rsa.kid }, payload, JWT_SECRET),
      "not-a-jwt",
    ];
    for (const token of confused) expect(await signIn(token)).toEqual(REFUSED);
  });

  it("follows a rotation: a new key is read once it signs, a removed key is refused after the read", async () => {
    const next = await idpKey("ES256", "ec-2");
    const oldToken = await idpToken(ec, claims());
    expect(await signIn(oldToken)).toEqual(ACCEPTED);
    jwks.publish(rsa, next, ed);
    await sleep(COOLDOWN_SECONDS * 1000 + 100);
    const before = jwks.state.reads;
    expect(await signIn(await idpToken(next, claims()))).toEqual(ACCEPTED);
    expect(jwks.state.reads).toBe(before + 1);
    expect(await signIn(oldToken)).toEqual(REFUSED);
    // unknown key ids within the cooldown do not read the set again
    const reads = jwks.state.reads;
    for (let i = 0; i < 5; i++)
      expect(await signIn(await idpToken(await idpKey("ES256", `x-${i}`), claims()))).toEqual(REFUSED);
    expect(jwks.state.reads).toBe(reads);
  });

  it("keeps verifying with the keys in hand while the key set is down, even past their age; a new key id is 503", async () => {
    await sleep(COOLDOWN_SECONDS * 1000 + 100);
    expect(await signIn(await idpToken(rsa, claims()))).toEqual(ACCEPTED);
    jwks.state.down = true;
    expect(await signIn(await idpToken(ed, claims()))).toEqual(ACCEPTED);
    const unknown = await signIn(await idpToken(await idpKey("EdDSA", "ed-new"), claims()));
    expect(unknown.status).toBe(503);
    expect(unknown.code).toBe("UNAVAILABLE");
    await sleep(CACHE_SECONDS * 1000 + 200);
    expect(await signIn(await idpToken(rsa, claims()))).toEqual(ACCEPTED);
    expect(await signIn(await idpToken(rsa, claims({ aud: "another-api" })))).toEqual(REFUSED);
    jwks.state.down = false;
    await sleep(COOLDOWN_SECONDS * 1000 + 100);
    const reads = jwks.state.reads;
    expect(await signIn(await idpToken(ed, claims()))).toEqual(ACCEPTED);
    expect(jwks.state.reads).toBe(reads + 1);
  });

  it("reads the key set once for a burst of forged key ids past the cooldown, and holds no token whose key is in hand meanwhile", async () => {
    const forged = await Promise.all(Array.from({ length: 40 }, (_, i) => idpKey("ES256", `forged-${i}`)));
    const tokens = await Promise.all(forged.map((key) => idpToken(key, claims())));
    const genuine = await idpToken(ec, claims());
    jwks.publish(rsa, ec, ed);
    await sleep(COOLDOWN_SECONDS * 1000 + 100);
    expect(await signIn(await idpToken(ec, claims()))).toEqual(ACCEPTED); // read now: ec was rotated out
    await sleep(COOLDOWN_SECONDS * 1000 + 100); // past the cooldown, the keys still fresh
    jwks.state.delayMs = 1_500; // a slow key set
    const reads = jwks.state.reads;
    const burst = Promise.all(tokens.map(signIn));
    await sleep(100);
    const first = await Promise.race([
      signIn(genuine).then((answer) => ({ genuine: answer })),
      burst.then(() => "the burst"),
    ]);
    expect(first).toEqual({ genuine: ACCEPTED });
    expect(await burst).toEqual(tokens.map(() => REFUSED));
    expect(jwks.state.reads).toBe(reads + 1);
  });
});

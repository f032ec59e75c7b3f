import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, type JWK, SignJWT } from "jose";

/** One signing key of the test identity provider: its private key and its public JWK (with `kid` and `alg`). */
export type IdpKey = { kid: string; alg: "RS256" | "ES256" | "EdDSA"; privateKey: CryptoKey; jwk: JWK };

/** A key pair made by jose, as an identity provider would publish it. */
export async function idpKey(alg: IdpKey["alg"], kid: string): Promise<IdpKey> {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
  return { kid, alg, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: "sig" } };
}

/** A token signed with `key`: `claims` first, then `iss`, `aud`, `sub`, `exp` unless set to undefined. */
export async function idpToken(
  key: IdpKey,
  claims: Record<string, unknown>,
  header: Record<string, unknown> = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const payload = Object.fromEntries(
    Object.entries({ iat: now, exp: now + 3600, ...claims }).filter(([, v]) => v !== undefined),
  );
  return new SignJWT(payload)
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: "JWT", ...header })
    .sign(key.privateKey);
}

/**
 * A real HTTP server publishing a JSON Web Key Set, as Auth0 or Cognito do at `/.well-known/jwks.json`:
 * what it serves can be changed (rotation), it can answer 503 (down) or slowly, and it counts reads.
 */
export async function startJwksServer() {
  const state = { keys: [] as JWK[], down: false, delayMs: 0, reads: 0 };
  const server: Server = createServer((req, res) => {
    if (req.url !== "/.well-known/jwks.json") {
      res.writeHead(404).end();
      return;
    }
    state.reads++;
    const answer = () => {
      if (state.down) res.writeHead(503).end("down");
      else
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ keys: state.keys }));
    };
    if (state.delayMs > 0) setTimeout(answer, state.delayMs);
    else answer();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    state,
    url: `http://127.0.0.1:${port}/.well-known/jwks.json`,
    /** Publishes exactly these keys. */
    publish(...keys: IdpKey[]) {
      state.keys = keys.map((k) => k.jwk);
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

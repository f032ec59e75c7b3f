import { generateKeyPair, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exampleSecrets, startWorker, type WorkerRuntime, wranglerVars } from "../../../local/worker-runtime";
import { newOrderId } from "../../../src/ids";
import { appForFile } from "../../support/app-per-file";
import { checkedFetch } from "../../support/openapi-check";
import { JWT_SECRET, shopperToken, unsignedToken } from "../../support/shopper";
import { storesUnchanged } from "../../support/stores-unchanged";

/**
 * Shopper tokens (HS256 JWTs) on the shopper routes: forged, malformed, expired and misdirected tokens
 * are 401 UNAUTHENTICATED and leave the stores as they were.
 */
const app = appForFile({ vars: { RATE_LIMIT_USER_PER_WINDOW: "1000" } });

const code = (body: Record<string, unknown>) => (body.error as { code?: string } | undefined)?.code;
const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
const unchanged = <T>(work: () => Promise<T>) => storesUnchanged(app, work);

async function apiCall(base: string, path: string, token?: string, body?: unknown) {
  const res = await checkedFetch(`${base}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { "Content-Type": "application/json", ...(token ? { Authorization: `Bearer ${token}` } : {}) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
}

describe("shopper tokens", () => {
  it("refuses alg none, a wrong key, expired, not yet valid, no or bad sub, RS256 and HS512, touching nothing", async () => {
    const sale = await app.api.createSale({ stock: 3 });
    const { privateKey } = await generateKeyPair("RS256");
    const now = Math.floor(Date.now() / 1000);
    const sign = (
      claims: Record<string, unknown>,
      alg = "HS256",
      key: unknown = new TextEncoder().encode(JWT_SECRET),
    ) => new SignJWT(claims).setProtectedHeader({ alg, typ: "JWT" }).sign(key as Uint8Array);
    const tokens: Record<string, string> = {
      algNone: unsignedToken("mallory"),
      algNoneUpper: `${b64({ alg: "NONE", typ: "JWT" })}.${b64({ sub: "mallory", exp: now + 60 })}.`,
      wrongKey: await shopperToken("mallory", { secret: "another-secret-entirely-123" }),
      expired: await shopperToken("mallory", { expiresInSeconds: -60 }),
      notYetValid: await sign({ sub: "mallory", nbf: now + 600, exp: now + 3600 }),
      missingSub: await sign({ exp: now + 60 }),
      emptySub: await sign({ sub: "", exp: now + 60 }),
      numericSub: await sign({ sub: 42, exp: now + 60 }),
      hugeSub: await sign({ sub: "m".repeat(500), exp: now + 60 }),
      rs256: await sign({ sub: "mallory", exp: now + 60 }, "RS256", privateKey),
      hs512SameSecret: await sign({ sub: "mallory", exp: now + 60 }, "HS512"),
      truncated: (await shopperToken("mallory")).slice(0, -3),
      twoParts: (await shopperToken("mallory")).split(".").slice(0, 2).join("."),
    };
    await unchanged(async () => {
      for (const [name, token] of Object.entries(tokens)) {
        const buy = await app.api.call("POST", `/api/buy/${sale.productToken}`, {
          token,
          body: { quantity: 1 },
        });
        expect([name, buy.status, code(buy.body)]).toEqual([name, 401, "UNAUTHENTICATED"]);
        const order = await app.api.call("GET", `/api/orders/${newOrderId(sale.saleId)}`, { token });
        expect([name, order.status]).toEqual([name, 401]);
      }
      for (const header of [
        "",
        "Bearer",
        "Bearer ",
        "Basic abc",
        `bearer ${await shopperToken("m")}`,
        `Token ${await shopperToken("m")}`,
      ]) {
        const res = await app.api.call("POST", `/api/buy/${sale.productToken}`, {
          headers: { Authorization: header },
          body: { quantity: 1 },
        });
        expect([header.slice(0, 12), res.status]).toEqual([header.slice(0, 12), 401]);
      }
    });
  });
});

describe("shopper token claims", () => {
  const now = () => Math.floor(Date.now() / 1000);
  const sign = (claims: Record<string, unknown>) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .sign(new TextEncoder().encode(JWT_SECRET));
  const orderAs = (base: string, token: string) =>
    apiCall(base, `/api/orders/${newOrderId("s00000000000")}`, token);

  it("refuses a token without exp (it would never expire) and an expired one, on every shopper route", async () => {
    const sale = await app.api.createSale({ stock: 3 });
    const tokens = {
      noExp: await sign({ sub: "forever", iat: now() }),
      nullExp: await sign({ sub: "forever", exp: null }),
      stringExp: await sign({ sub: "forever", exp: String(now() + 3600) }),
      expired: await shopperToken("forever", { expiresInSeconds: -1 }),
    };
    await unchanged(async () => {
      for (const [name, token] of Object.entries(tokens)) {
        const buy = await app.api.call("POST", `/api/buy/${sale.productToken}`, { token, body: {} });
        expect([name, buy.status, code(buy.body)]).toEqual([name, 401, "UNAUTHENTICATED"]);
        const order = await orderAs(app.worker.url, token);
        expect([name, order.status, code(order.body)]).toEqual([name, 401, "UNAUTHENTICATED"]);
      }
    });
    const fine = await orderAs(app.worker.url, await shopperToken("forever"));
    expect([fine.status, code(fine.body)]).toEqual([404, "UNKNOWN_ORDER"]);
  });

  describe("with JWT_ISSUER and JWT_AUDIENCE set", () => {
    let strict: WorkerRuntime;
    const issuer = "https://shop.example";
    const audience = "flash-sale";
    beforeAll(async () => {
      strict = await startWorker({
        vars: {
          ...wranglerVars(),
          ...exampleSecrets(),
          ...app.stack.vars,
          JWT_ISSUER: issuer,
          JWT_AUDIENCE: audience,
        },
      });
    });
    afterAll(async () => {
      await strict?.stop();
    });

    it("refuses a missing or wrong iss or aud and takes the right ones, also from the dev login", async () => {
      const exp = now() + 600;
      const refused = {
        noIssOrAud: await sign({ sub: "carol", exp }),
        noAud: await sign({ sub: "carol", exp, iss: issuer }),
        noIss: await sign({ sub: "carol", exp, aud: audience }),
        wrongIss: await sign({ sub: "carol", exp, iss: "https://evil.example", aud: audience }),
        wrongAud: await sign({ sub: "carol", exp, iss: issuer, aud: "another-app" }),
        wrongAudList: await sign({ sub: "carol", exp, iss: issuer, aud: ["a", "b"] }),
        rightButNoExp: await sign({ sub: "carol", iss: issuer, aud: audience }),
      };
      for (const [name, token] of Object.entries(refused)) {
        const res = await orderAs(strict.url, token);
        expect([name, res.status, code(res.body)]).toEqual([name, 401, "UNAUTHENTICATED"]);
      }
      const accepted = {
        right: await sign({ sub: "carol", exp, iss: issuer, aud: audience }),
        audInList: await sign({ sub: "carol", exp, iss: issuer, aud: ["other", audience] }),
        devLogin: String(
          (await apiCall(strict.url, "/api/dev/login", undefined, { userId: "carol" })).body.token,
        ),
      };
      for (const [name, token] of Object.entries(accepted)) {
        const res = await orderAs(strict.url, token);
        expect([name, res.status, code(res.body)]).toEqual([name, 404, "UNKNOWN_ORDER"]);
      }
    });
  });
});

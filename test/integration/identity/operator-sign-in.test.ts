import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { saleDefinition } from "../../support/api";
import { type AppUnderTest, startApp } from "../../support/app";
import { type IdpKey, idpKey, idpToken, startJwksServer } from "../../support/jwks-server";
import { ADMIN_TOKEN, JWT_SECRET } from "../../support/shopper";

/**
 * Operators signing in with the shop's own sign-in (OPERATOR_JWT_AUDIENCE): a token of the shop's key set
 * for the operators' audience, its role in `flash_sale_role`. The operator is `idp:<sub>` in the audit
 * log; a `read` role only reads; a shopper's token (the shoppers' audience) is never an operator's,
 * whatever it claims; a valid token without an operator's role is 401; HS256 is never accepted here; a
 * key set that cannot be read is 503 with Retry-After, not 401.
 */
const ISSUER = "https://idp.example.test/";
const SHOPPERS = "flash-sale-test";
const OPERATORS = "flash-sale-operators-test";

let jwks: Awaited<ReturnType<typeof startJwksServer>>;
let app: AppUnderTest;
let key: IdpKey;

beforeAll(async () => {
  jwks = await startJwksServer();
  key = await idpKey("ES256", "staff-1");
  app = await startApp({
    vars: {
      JWT_JWKS_URL: jwks.url,
      JWT_ISSUER: ISSUER,
      JWT_AUDIENCE: SHOPPERS,
      OPERATOR_JWT_AUDIENCE: OPERATORS,
      JWT_JWKS_COOLDOWN_SECONDS: "1",
    },
  });
});
afterAll(async () => {
  await app?.stop();
  await jwks?.stop();
});

const staff = (sub: string, extra: Record<string, unknown> = {}) =>
  idpToken(key, { sub, iss: ISSUER, aud: OPERATORS, ...extra });

async function asOperator(token: string, method: string, path: string, body?: unknown) {
  const res = await app.api.call<{ error?: { code: string }; [k: string]: unknown }>(
    method,
    `/api/admin${path}`,
    {
      token,
      ...(body === undefined ? {} : { body }),
    },
  );
  return {
    status: res.status,
    code: res.body.error?.code,
    body: res.body,
    retryAfter: res.headers.get("Retry-After"),
  };
}

/** An HS256 token signed with the shoppers' secret: what anyone holding JWT_SECRET can make. */
function hs256(payload: Record<string, unknown>): string {
  const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
  const input = `${b64({ alg: "HS256", typ: "JWT" })}.${b64(payload)}`;
  return `${input}.${createHmac("sha256", JWT_SECRET).update(input).digest("base64url")}`;
}

describe.sequential("operators signing in with the shop's sign-in", () => {
  it("is 503 with Retry-After, not 401, while the key set cannot be read and no key is in hand", async () => {
    jwks.state.down = true;
    try {
      const res = await asOperator(await staff("olga", { flash_sale_role: "admin" }), "GET", "/sales");
      expect(res).toMatchObject({ status: 503, code: "UNAVAILABLE" });
      expect(Number(res.retryAfter)).toBeGreaterThanOrEqual(1);
    } finally {
      jwks.state.down = false;
    }
  });

  it("lets an admin change things, named idp:<sub> in the audit log", async () => {
    jwks.publish(key);
    await new Promise((r) => setTimeout(r, 1_100));
    const token = await staff("olga", { flash_sale_role: "admin" });
    const created = await asOperator(token, "POST", "/sales", saleDefinition({ name: "Signed in" }));
    expect(created.status).toBe(201);
    const saleId = String(created.body.saleId);
    const audit = await app.api.call<{ entries: { action: string; actor: string; saleId?: string }[] }>(
      "GET",
      "/api/admin/audit?limit=20",
      { token: ADMIN_TOKEN },
    );
    expect(audit.body.entries.find((e) => e.saleId === saleId && e.action === "sale.create")).toMatchObject({
      actor: "idp:olga",
    });
    expect(JSON.stringify(audit.body)).not.toContain(token);
  });

  it("lets a reader read and nothing else", async () => {
    const sale = await app.api.createSale({ stock: 3 });
    const reader = await staff("grafana", { flash_sale_role: "read" });
    expect((await asOperator(reader, "GET", `/sales/${sale.saleId}/stats`)).status).toBe(200);
    expect(await asOperator(reader, "POST", `/sales/${sale.saleId}/pause`)).toMatchObject({
      status: 403,
      code: "FORBIDDEN",
    });
    const seen = await app.api.call<{ status: string }>("GET", `/api/sales/${sale.saleId}`);
    expect(seen.body.status).toBe("live");
  });

  it("refuses a valid token without an operator's role and every token that is not one (401)", async () => {
    const path = "/sales";
    for (const role of [undefined, "superuser", ["admin"], ""]) {
      const token = await staff("mallory", role === undefined ? {} : { flash_sale_role: role });
      const res = await asOperator(token, "GET", path);
      expect(res, JSON.stringify(role)).toMatchObject({ status: 401, code: "UNAUTHENTICATED" });
      expect(JSON.stringify(res.body)).toContain("names no operator role");
    }
    const refused = [
      // a shopper's token of the same key set, claiming the role: the shoppers' audience is never an operator's
      await idpToken(key, { sub: "mallory", iss: ISSUER, aud: SHOPPERS, flash_sale_role: "admin" }),
      // another issuer, an expired token, an HS256 token made with the shoppers' secret
      await idpToken(key, {
        sub: "mallory",
        iss: "https://evil.test/",
        aud: OPERATORS,
        flash_sale_role: "admin",
      }),
      await staff("mallory", { flash_sale_role: "admin", exp: Math.floor(Date.now() / 1000) - 60 }),
      hs256({ sub: "mallory", iss: ISSUER, aud: OPERATORS, flash_sale_role: "admin", exp: 4_000_000_000 }),
      // a key the shop never published
      await idpToken(await idpKey("ES256", "staff-1"), {
        sub: "mallory",
        iss: ISSUER,
        aud: OPERATORS,
        flash_sale_role: "admin",
      }),
    ];
    for (const [i, token] of refused.entries())
      expect(await asOperator(token, "GET", path), `token ${i}`).toMatchObject({
        status: 401,
        code: "UNAUTHENTICATED",
      });
  });

  it("takes a token for both the shoppers' and the operators' audience as a shopper's, never an operator's", async () => {
    const token = await staff("both-1", { aud: [SHOPPERS, OPERATORS], flash_sale_role: "admin" });
    // the shopper routes take it (an unknown order of a signed-in shopper is 404, not 401)
    const asShopper = await app.api.call<{ error?: { code: string } }>("GET", "/api/orders/nope-1", {
      token,
    });
    expect([asShopper.status, asShopper.body.error?.code]).toEqual([404, "UNKNOWN_ORDER"]);
    expect(
      await asOperator(token, "POST", "/sales", saleDefinition({ name: "Made with a shopper's token" })),
    ).toMatchObject({
      status: 401,
      code: "UNAUTHENTICATED",
    });
  });
});

import { createHash } from "node:crypto";
import { generateKeyPair, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exampleSecrets, startWorker, type WorkerRuntime, wranglerVars } from "../../local/worker-runtime";
import { newOrderId } from "../../src/ids";
import { appForFile } from "../support/app-per-file";
import { rowCounts } from "../support/db-inspect";
import { deliverJob } from "../support/jobs";
import { checkedFetch } from "../support/openapi-check";
import { filler, stall, streamRequest } from "../support/raw-request";
import { snapshot } from "../support/redis-inspect";
import { ADMIN_TOKEN, JWT_SECRET, shopperToken, unsignedToken } from "../support/shopper";
import { type Site, startSite } from "../support/site-worker";

/**
 * Security: QStash signatures on every job route, shopper JWTs, operator tokens, other users' orders,
 * security headers and CORS. Every refused request must also leave the stores as they were.
 */
const app = appForFile({ vars: { RATE_LIMIT_USER_PER_WINDOW: "1000" } });

const code = (body: Record<string, unknown>) => (body.error as { code?: string } | undefined)?.code;
const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");

/** Redis without the rate-limit counters: earlier tests' counters expire on their own meanwhile. */
async function state(): Promise<Record<string, unknown>> {
  return Object.fromEntries(
    Object.entries(await snapshot(app.redis)).filter(([key]) => !key.includes(":rl:")),
  );
}

async function unchanged<T>(work: () => Promise<T>): Promise<T> {
  const [redisBefore, pgBefore] = [await state(), await rowCounts(app.db)];
  const result = await work();
  expect(await state()).toEqual(redisBefore);
  expect(await rowCounts(app.db)).toEqual(pgBefore);
  return result;
}

/** A QStash-style signature with chosen claims (what a forger could send). */
async function craftSignature(opts: {
  key: string;
  url: string;
  body: string;
  iss?: string;
  alg?: string;
  nbfOffset?: number;
}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const hash = createHash("sha256").update(opts.body).digest("base64url");
  return new SignJWT({ body: hash })
    .setProtectedHeader({ alg: opts.alg ?? "HS256", typ: "JWT" })
    .setIssuer(opts.iss ?? "Upstash")
    .setSubject(opts.url)
    .setIssuedAt(now)
    .setNotBefore(now + (opts.nbfOffset ?? 0))
    .setExpirationTime(now + 300)
    .sign(new TextEncoder().encode(opts.key));
}

async function apiCall(base: string, path: string, token?: string, body?: unknown) {
  const res = await checkedFetch(`${base}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { "Content-Type": "application/json", ...(token ? { Authorization: `Bearer ${token}` } : {}) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
}

async function post(path: string, body: string, signature?: string) {
  const res = await checkedFetch(`${app.worker.url}${path}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...(signature ? { "Upstash-Signature": signature } : {}) },
    body,
  });
  return { status: res.status, text: await res.text() };
}

describe("QStash signatures on every job route", () => {
  it("refuses forged, expired, not-yet-valid, misdirected, tampered, unsigned and wrong-issuer deliveries, writing nothing", async () => {
    const sale = await app.api.createSale({ stock: 3 });
    const bought = await app.api.buy(sale.productToken, "sig-owner", 1);
    await app.drain();
    const orderId = String(bought.body.orderId);
    const job = {
      orderId,
      saleId: sale.saleId,
      userId: "sig-owner",
      quantity: 1,
      createdAt: Date.now() - 700_000,
      expiresAt: Date.now() - 100_000,
    };
    const failure = { sourceMessageId: "msg_forged", url: "x", status: 500, sourceBody: b64(job) };
    const key = app.stack.vars.QSTASH_CURRENT_SIGNING_KEY;
    const base = app.worker.url;
    await unchanged(async () => {
      for (const [path, body] of [
        ["/api/jobs/payment-timeout", job],
        ["/api/jobs/failed", failure],
        ["/api/jobs/order-write", { ...job, orderId: newOrderId(sale.saleId) }],
        ["/api/jobs/void-reservation", { ...job, idempotencyKey: null }],
      ] as const) {
        const raw = JSON.stringify(body);
        const url = `${base}${path}`;
        const other = path === "/api/jobs/failed" ? "/api/jobs/order-write" : "/api/jobs/failed";
        const attempts = {
          forged: await deliverJob(app, path, body, { signingKey: "sig_not_the_key" }),
          expired: await deliverJob(app, path, body, { now: Date.now() - 3600_000 }),
          replayedElsewhere: await deliverJob(app, path, body, { signedUrl: `${base}${other}` }),
          otherHost: await deliverJob(app, path, body, { signedUrl: `https://evil.example${path}` }),
          tampered: await deliverJob(app, path, body, { tamper: (r) => r.replace(/}$/, ',"quantity":9}') }),
          notYetValid: await post(path, raw, await craftSignature({ key, url, body: raw, nbfOffset: 600 })),
          wrongIssuer: await post(path, raw, await craftSignature({ key, url, body: raw, iss: "Evil" })),
          algNone: await post(path, raw, `${b64({ alg: "none" })}.${b64({ iss: "Upstash", sub: url })}.`),
          garbage: await post(path, raw, "not-a-jwt"),
          missing: await post(path, raw),
        };
        for (const [name, res] of Object.entries(attempts))
          expect([name, path, res.status], res.text).toEqual([name, path, 401]);
      }
    });
    expect((await app.api.order(orderId, "sig-owner")).body.status).toBe("awaiting_payment");
  });

  it("accepts the next signing key on every route (key rotation), and only for the URL it names", async () => {
    const sale = await app.api.createSale({ stock: 3, paymentWindowSeconds: 1 });
    const next = app.stack.vars.QSTASH_NEXT_SIGNING_KEY;
    const job = {
      orderId: newOrderId(sale.saleId),
      saleId: sale.saleId,
      userId: "rotated",
      quantity: 1,
      createdAt: Date.now() - 5_000,
      expiresAt: Date.now() - 2_000,
    };
    const misdirected = await deliverJob(app, "/api/jobs/payment-timeout", job, {
      signingKey: next,
      signedUrl: `${app.worker.url}/api/jobs/order-write`,
    });
    expect(misdirected.status).toBe(401);
    expect((await deliverJob(app, "/api/jobs/order-write", job, { signingKey: next })).status).toBe(200);
    expect((await deliverJob(app, "/api/jobs/payment-timeout", job, { signingKey: next })).status).toBe(200);
    const failure = { sourceMessageId: `msg_${job.orderId}`, url: "u", status: 500, sourceBody: b64(job) };
    expect((await deliverJob(app, "/api/jobs/failed", failure, { signingKey: next })).status).toBe(200);
    const { rows } = await app.db.query("select status from orders where id = $1", [job.orderId]);
    expect(rows.map((r) => r.status)).toEqual(["expired"]);
  });
});

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

describe("request bodies", () => {
  const JOB_PATHS = [
    "/api/jobs/order-write",
    "/api/jobs/payment-timeout",
    "/api/jobs/void-reservation",
    "/api/jobs/failed",
  ];
  const FIFTY_MB = 50 * 1024 * 1024;
  const CHUNK = 16 * 1024;
  const forged = { "Content-Type": "application/json", "Upstash-Signature": "any-value-at-all" };
  const errorCode = (text: string) => {
    try {
      return code(JSON.parse(text) as Record<string, unknown>);
    } catch {
      return `not JSON: ${text.slice(0, 80)}`;
    }
  };

  it("a 50 MB job body with any Upstash-Signature is refused by its Content-Length before it is read, writing nothing", async () => {
    await unchanged(async () => {
      for (const path of JOB_PATHS) {
        // one chunk, then the rest only if no answer came within 5 s: a server that reads before it
        // checks takes all 50 MB first
        const answer = await streamRequest(`${app.worker.url}${path}`, {
          headers: { ...forged, "Content-Length": String(FIFTY_MB) },
          body: filler(CHUNK, FIFTY_MB / CHUNK),
          pause: { afterBytes: CHUNK, forMs: 5_000 },
        });
        expect([path, answer.status, errorCode(answer.text)]).toEqual([path, 413, "PAYLOAD_TOO_LARGE"]);
        expect(answer.sentBytes, path).toBe(CHUNK);
      }
    });
  });

  it("a Content-Length that lies (50 MB declared, 1 KiB sent, then nothing) is answered without waiting for the rest", async () => {
    await unchanged(async () => {
      for (const path of JOB_PATHS) {
        const answer = await streamRequest(`${app.worker.url}${path}`, {
          headers: { ...forged, "Content-Length": String(FIFTY_MB) },
          body: stall(new Uint8Array(1024).fill(32)),
        });
        expect([path, answer.status, errorCode(answer.text)]).toEqual([path, 413, "PAYLOAD_TOO_LARGE"]);
      }
    });
  });

  it("a chunked body (no Content-Length) that never ends is cut off once past the cap, on every route that reads a body", async () => {
    const sale = await app.api.createSale({ stock: 3 });
    const shopper = `Bearer ${await shopperToken("streamer")}`;
    const admin = `Bearer ${ADMIN_TOKEN}`;
    type Route = [path: string, headers: Record<string, string>, cap: number, status: number, code: string];
    const routes: Route[] = [
      ["/api/jobs/order-write", forged, 64 * 1024, 413, "PAYLOAD_TOO_LARGE"],
      ["/api/jobs/payment-timeout", forged, 64 * 1024, 413, "PAYLOAD_TOO_LARGE"],
      ["/api/jobs/void-reservation", forged, 64 * 1024, 413, "PAYLOAD_TOO_LARGE"],
      ["/api/jobs/failed", forged, 256 * 1024, 413, "PAYLOAD_TOO_LARGE"],
      [`/api/buy/${sale.productToken}`, { Authorization: shopper }, 1024, 400, "INVALID_REQUEST"],
      [
        `/api/orders/${newOrderId(sale.saleId)}/pay`,
        { Authorization: shopper },
        1024,
        400,
        "INVALID_REQUEST",
      ],
      ["/api/admin/sales", { Authorization: admin }, 16 * 1024, 400, "INVALID_REQUEST"],
      [`/api/admin/sales/${sale.saleId}/stock`, { Authorization: admin }, 16 * 1024, 400, "INVALID_REQUEST"],
      ["/api/dev/login", {}, 1024, 400, "INVALID_REQUEST"],
    ];
    await unchanged(async () => {
      for (const [path, headers, cap, status, errCode] of routes) {
        // just past the cap, and then silence: the body never ends, so only a server that counts
        // while it reads can answer
        const chunk = 1024;
        const answer = await streamRequest(`${app.worker.url}${path}`, {
          headers: { "Content-Type": "application/json", ...headers },
          body: filler(chunk, Number.POSITIVE_INFINITY),
          chunked: true,
          pause: { afterBytes: cap + chunk, forMs: 60_000 },
        });
        expect([path, answer.status, errorCode(answer.text)]).toEqual([path, status, errCode]);
        expect(answer.sentBytes, path).toBe(cap + chunk);
      }
    });
  });

  it("a signed failure callback carrying the largest job body a job route takes (50 orders) is still taken", async () => {
    const sale = await app.api.createSale({ stock: 1 });
    const orders = Array.from({ length: 50 }, () => ({
      orderId: newOrderId(sale.saleId),
      saleId: sale.saleId,
      userId: "\u0001".repeat(128),
      quantity: 1,
      createdAt: Date.now(),
      expiresAt: Date.now() + 60_000,
      epoch: 1,
    }));
    const failure = {
      sourceMessageId: `msg_big_${sale.saleId}`,
      url: `${app.worker.url}/api/jobs/order-write`,
      status: 500,
      body: Buffer.from("x".repeat(4096)).toString("base64"),
      sourceBody: Buffer.from(JSON.stringify({ orders })).toString("base64"),
    };
    expect(JSON.stringify(failure).length).toBeGreaterThan(64 * 1024);
    const res = await deliverJob(app, "/api/jobs/failed", failure);
    expect(res.status, res.text).toBe(200);
  });
});

describe("operator routes", () => {
  it("answer 401 on every route without the operator token, with a wrong one or a shopper's, changing nothing", async () => {
    const sale = await app.api.createSale({ stock: 5 });
    const routes: [string, string, unknown?][] = [
      ["GET", "/api/admin/sales"],
      ["POST", "/api/admin/sales", { productId: "x", name: "x", priceCents: 1, stock: 1, perUserLimit: 1 }],
      ["GET", `/api/admin/sales/${sale.saleId}`],
      ["GET", `/api/admin/sales/${sale.saleId}/stats`],
      ["GET", `/api/admin/sales/${sale.saleId}/timeline`],
      ["POST", `/api/admin/sales/${sale.saleId}/reconcile`],
      ["POST", `/api/admin/sales/${sale.saleId}/pause`],
      ["POST", `/api/admin/sales/${sale.saleId}/resume`],
      ["POST", `/api/admin/sales/${sale.saleId}/stock`, { delta: 100 }],
      ["GET", "/api/admin/dead-letters"],
    ];
    const shopper = await shopperToken("operator-wannabe");
    await unchanged(async () => {
      for (const [method, path, body] of routes) {
        for (const token of [
          undefined,
          "wrong-token",
          `${ADMIN_TOKEN}x`,
          ADMIN_TOKEN.slice(0, -1),
          shopper,
        ]) {
          const res = await app.api.call(method, path, {
            ...(token ? { token } : {}),
            ...(body ? { body } : {}),
          });
          expect([method, path, token, res.status, code(res.body)]).toEqual([
            method,
            path,
            token,
            401,
            "UNAUTHENTICATED",
          ]);
        }
        const basic = await app.api.call(method, path, {
          headers: { Authorization: `Basic ${ADMIN_TOKEN}` },
        });
        expect(basic.status).toBe(401);
      }
    });
  });
});

describe("another shopper's order", () => {
  it("is 404 UNKNOWN_ORDER with exactly the body of an order that does not exist, queued or written, and stays as it was", async () => {
    const sale = await app.api.createSale({ stock: 5 });
    const written = String((await app.api.buy(sale.productToken, "victim", 1)).body.orderId);
    await app.drain();
    app.stack.qstash.pause();
    try {
      const queued = String((await app.api.buy(sale.productToken, "victim", 1)).body.orderId);
      const missing = newOrderId(sale.saleId);
      const nonexistent = await app.api.order(missing, "snoop");
      expect([nonexistent.status, code(nonexistent.body)]).toEqual([404, "UNKNOWN_ORDER"]);
      await unchanged(async () => {
        for (const orderId of [written, queued]) {
          for (const action of [undefined, "pay", "cancel"] as const) {
            const theirs = await app.api.order(orderId, "snoop", action);
            const none = await app.api.order(missing, "snoop", action);
            expect([orderId === written ? "written" : "queued", action, theirs.status, theirs.text]).toEqual([
              orderId === written ? "written" : "queued",
              action,
              none.status,
              none.text,
            ]);
            expect(theirs.headers.get("content-type")).toBe(none.headers.get("content-type"));
          }
        }
      });
      expect((await app.api.order(queued, "victim")).body.status).toBe("queued");
    } finally {
      app.stack.qstash.resume();
    }
    expect((await app.api.order(written, "victim")).body.status).toBe("awaiting_payment");
  });
});

describe("headers", () => {
  it("API responses carry the security headers and no CORS grant, preflight included", async () => {
    const sale = await app.api.createSale({ stock: 1 });
    const origin = { Origin: "https://evil.example" };
    const answers = [
      await app.api.call("GET", "/api/sales", { headers: origin }),
      await app.api.call("GET", `/api/sales/${sale.saleId}`, { headers: origin }),
      await app.api.call("POST", `/api/buy/${sale.productToken}`, { headers: origin, body: {} }),
      await app.api.call("GET", "/api/admin/sales", { headers: origin }),
      await app.api.call("OPTIONS", `/api/buy/${sale.productToken}`, {
        headers: {
          ...origin,
          "Access-Control-Request-Method": "POST",
          "Access-Control-Request-Headers": "authorization",
        },
      }),
      await app.api.call("GET", "/api/nothing-here", { headers: origin }),
    ];
    for (const res of answers) {
      expect(res.headers.get("access-control-allow-origin")).toBeNull();
      expect(res.headers.get("access-control-allow-credentials")).toBeNull();
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(res.headers.get("x-frame-options")).toBe("SAMEORIGIN");
      expect(res.headers.get("strict-transport-security")).toMatch(/max-age=\d+/);
      expect(res.headers.get("referrer-policy")).toBe("no-referrer");
      expect(res.status).toBeLessThan(500);
    }
  });
});

describe("pages", () => {
  let site: Site;
  beforeAll(async () => {
    site = await startSite();
  });
  afterAll(async () => {
    await site?.stop();
  });

  it("are served with no CORS grant", async () => {
    for (const path of ["/", "/admin.html", "/assets/api.js"]) {
      const res = await fetch(`${site.url}${path}`, { headers: { Origin: "https://evil.example" } });
      await res.arrayBuffer();
      expect([path, res.status]).toEqual([path, 200]);
      expect(res.headers.get("access-control-allow-origin")).toBeNull();
    }
  });

  it("carry security headers (nosniff, no framing, referrer policy, a CSP)", async () => {
    for (const path of ["/", "/admin.html"]) {
      const res = await fetch(`${site.url}${path}`);
      await res.arrayBuffer();
      expect(res.headers.get("x-content-type-options"), path).toBe("nosniff");
      expect(
        res.headers.get("x-frame-options") ??
          res.headers.get("content-security-policy")?.match(/frame-ancestors/)?.[0],
        path,
      ).toBeTruthy();
      expect(res.headers.get("referrer-policy"), path).toBeTruthy();
      expect(res.headers.get("content-security-policy"), path).toBeTruthy();
    }
  });
});

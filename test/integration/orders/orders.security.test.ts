import { createHash } from "node:crypto";
import { SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import { newOrderId } from "../../../src/ids";
import { saleKeys } from "../../../src/stock/keys";
import { appForFile } from "../../support/app-per-file";
import { deliverJob } from "../../support/jobs";
import { checkedFetch } from "../../support/openapi-check";
import { storesUnchanged } from "../../support/stores-unchanged";

/**
 * Orders against forgers: the job routes take only QStash's signature for their own URL, and another
 * shopper's order cannot be told from one that does not exist. Refusals leave the stores as they were.
 */
const app = appForFile({ vars: { RATE_LIMIT_USER_PER_WINDOW: "1000" } });

const code = (body: Record<string, unknown>) => (body.error as { code?: string } | undefined)?.code;
const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
const unchanged = <T>(work: () => Promise<T>) => storesUnchanged(app, work);
/** An error body as any request would get it: every answer carries its own requestId. */
const sameFor = (text: string) => text.replace(/"requestId":"[^"]*"/, '"requestId":"…"');

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
    // under load the order's publish can reach QStash after drain's wait: the snapshot below must not
    // catch its write and acknowledgement half-way, so wait for the sale's outbox to be empty
    const deadline = Date.now() + 20_000;
    while ((await app.redis.zcard(saleKeys(sale.saleId).outbox)) > 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      await app.drain();
    }
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
            expect([
              orderId === written ? "written" : "queued",
              action,
              theirs.status,
              sameFor(theirs.text),
            ]).toEqual([orderId === written ? "written" : "queued", action, none.status, sameFor(none.text)]);
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

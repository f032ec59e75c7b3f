import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { signDelivery } from "../../../local/qstash-delivery";
import { newOrderId } from "../../../src/ids";
import { appForFile } from "../../support/app-per-file";
import { rowCounts } from "../../support/db-inspect";
import { schemaFuzzRequests } from "../../support/fuzz-from-schemas";
import { type FuzzRequest, fuzzRequests, safeHeader } from "../../support/fuzz-requests";
import { deliverJob } from "../../support/jobs";
import { documentAt, exchangeProblems } from "../../support/openapi-check";
import { documentSchemas } from "../../support/openapi-schemas";
import { snapshot } from "../../support/redis-inspect";
import { ADMIN_TOKEN, shopperToken } from "../../support/shopper";
import { testRuntime } from "../../support/test-runtime";

/**
 * The volume: in workerd 10,000 malformed requests; on Deno and Bun, which run the same app and answer
 * through the same code, a share (the CI run's time goes to them). Guessed product tokens:
 * guessed-product-tokens.test.ts.
 */
const MALFORMED = testRuntime() === "workers" ? 10_000 : 4_000;

/**
 * Bad input at volume: 10,000 malformed requests (4,000 on Deno and Bun) across every route (a third of
 * them drawn from the OpenAPI document's request schemas). Nothing may answer 5xx or show a stack trace,
 * every answer must be one the document allows, and nothing may change in Redis or Postgres.
 */
const app = appForFile({
  vars: {
    RATE_LIMIT_USER_PER_WINDOW: "1000000",
    RATE_LIMIT_IP_PER_WINDOW: "1000000",
    SHOPPER_LIMIT_USER_PER_WINDOW: "1000000",
    SHOPPER_LIMIT_IP_PER_WINDOW: "1000000",
  },
});

const STACK_TRACE = /\bat [\w.<>]+ \(|\.(ts|js|mjs):\d+|Error:|DrizzleQueryError|NeonDbError|node_modules/;

async function pool<T>(items: T[], limit: number, task: (item: T) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) await task(items[next++] as T);
    }),
  );
}

const bodySize = (body: FuzzRequest["body"]) =>
  body === undefined ? 0 : typeof body === "string" ? Buffer.byteLength(body) : body.byteLength;

/**
 * Sends one request. A server that refuses an oversized body before reading it may close the connection
 * while the client still sends: that counts as refused (status 0) for bodies over the 1 KiB limit only.
 */
async function send(req: FuzzRequest): Promise<{ status: number; text: string; problem: string | null }> {
  const url = `${app.worker.url}${req.path}`;
  const headers = { ...req.headers };
  if (req.signJob) {
    const body =
      typeof req.body === "string" ? new TextEncoder().encode(req.body) : (req.body ?? new Uint8Array());
    headers["Upstash-Signature"] = await signDelivery({
      signingKey: app.stack.vars.QSTASH_CURRENT_SIGNING_KEY,
      url,
      body,
    });
  }
  try {
    const res = await fetch(url, {
      method: req.method,
      headers,
      ...(req.body !== undefined && req.method !== "GET" ? { body: req.body as BodyInit } : {}),
    });
    if (res.headers.get("content-type")?.startsWith("text/event-stream")) {
      await res.body?.cancel();
      return { status: res.status, text: "", problem: "opened an event stream" };
    }
    const text = await res.text();
    const seen = { method: req.method, url: res.url || url, status: res.status, headers: res.headers, text };
    return { status: res.status, text, problem: await exchangeProblems(seen) };
  } catch (error) {
    if (bodySize(req.body) > 1024) return { status: 0, text: "", problem: null };
    throw error;
  }
}

describe("fuzzing every route", () => {
  it(`${MALFORMED.toLocaleString("en")} malformed requests: no 5xx, no stack trace, every answer one the document allows, no state change`, {
    timeout: 120_000,
  }, async () => {
    const sale = await app.api.createSale({ stock: 5 });
    const ctx = {
      saleId: sale.saleId,
      productToken: sale.productToken,
      shopper: await shopperToken("fuzzer"),
      admin: ADMIN_TOKEN,
      orderIdLike: newOrderId(sale.saleId),
    };
    const doc = await documentAt(app.worker.url);
    const fromSchemas = schemaFuzzRequests(doc, documentSchemas(doc), {
      params: { saleId: ctx.saleId, productToken: ctx.productToken, orderId: ctx.orderIdLike },
      bearer: { shopperJwt: `Bearer ${ctx.shopper}`, operatorToken: `Bearer ${ctx.admin}` },
      cleanHeader: (v) => safeHeader(v, true),
    });
    expect(fromSchemas, "the document describes request schemas to draw from").not.toBeNull();
    const requests = fc.sample(fuzzRequests({ ...ctx, fromSchemas }), {
      numRuns: MALFORMED,
      seed: 20_260_601,
    });
    const redisBefore = await snapshot(app.redis);
    const pgBefore = await rowCounts(app.db);
    const byLabel = new Map<string, Map<number, number>>();
    const bad: string[] = [];
    const check = async (req: FuzzRequest) => {
      const res = await send(req);
      const statuses = byLabel.get(req.label) ?? new Map<number, number>();
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      byLabel.set(req.label, statuses);
      let shaped = false;
      try {
        const body = JSON.parse(res.text);
        shaped = typeof body?.error?.code === "string" && typeof body?.error?.message === "string";
      } catch {}
      if (res.status === 0) return;
      if (res.status >= 500 || res.status < 400 || !shaped || STACK_TRACE.test(res.text))
        bad.push(
          `${req.label}: ${req.method} ${req.path.slice(0, 80)} -> ${res.status} ${res.text.slice(0, 160)}`,
        );
      else if (res.problem) bad.push(`${req.label}: ${res.problem}`);
    };
    // oversized bodies go one at a time: a server that answers before reading them closes the connection,
    // and a concurrent client may be reusing that socket at that moment (a reset no request caused)
    await pool(
      requests.filter((r) => bodySize(r.body) <= 1024),
      12,
      check,
    );
    for (const req of requests.filter((r) => bodySize(r.body) > 1024)) await check(req);
    const summary = [...byLabel].map(
      ([label, s]) => `${label}: ${[...s].map(([st, n]) => `${st}×${n}`).join(" ")}`,
    );
    expect({ failures: bad.length, first: bad.slice(0, 10) }, summary.join("\n")).toEqual({
      failures: 0,
      first: [],
    });
    expect(await snapshot(app.redis)).toEqual(redisBefore);
    expect(await rowCounts(app.db)).toEqual(pgBefore);
    expect(byLabel.size).toBeGreaterThanOrEqual(12);
    expect([...byLabel.keys()].filter((label) => label.startsWith("schema ")).length).toBeGreaterThan(0);
  });

  it("a signed order job whose body is null or an empty batch is refused with 400", async () => {
    for (const path of ["/api/jobs/order-write", "/api/jobs/payment-timeout"])
      for (const body of [null, { orders: [] }, { orders: [null] }, { orders: "x" }])
        expect([path, body, (await deliverJob(app, path, body)).status]).toEqual([path, body, 400]);
  });

  // Validly signed but malformed jobs (only a holder of the signing key can send them) are refused
  // with 400 rather than retried: bad quantities, a missing time, an unknown sale, a null callback body.
  // (A well-formed order over the per-user limit is not malformed: it is written, and the sale's stats
  // report the user over the limit; see orders/batch-writes.test.ts.)
  it("validly signed but malformed jobs are refused with 4xx, never 5xx", async () => {
    const sale = await app.api.createSale({ stock: 5, perUserLimit: 2 });
    const now = Date.now();
    const order = (o: Record<string, unknown>) => ({
      saleId: sale.saleId,
      userId: "u",
      orderId: newOrderId(sale.saleId),
      quantity: 1,
      createdAt: now,
      expiresAt: now + 60_000,
      ...o,
    });
    const unknownSale = "szzzzzzzzzzz";
    const cases: [string, unknown][] = [
      ["/api/jobs/failed", null],
      ["/api/jobs/order-write", order({ quantity: 0 })],
      ["/api/jobs/order-write", order({ quantity: -3 })],
      ["/api/jobs/order-write", order({ quantity: 1e12 })],
      ["/api/jobs/order-write", order({ createdAt: 1e300 })],
      ["/api/jobs/order-write", order({ saleId: unknownSale, orderId: newOrderId(unknownSale) })],
      ["/api/jobs/order-write", order({ createdAt: undefined })],
      [
        "/api/jobs/payment-timeout",
        order({ saleId: unknownSale, orderId: newOrderId(unknownSale), expiresAt: now - 1 }),
      ],
    ];
    for (const [path, body] of cases) {
      const res = await deliverJob(app, path, body);
      expect([path, JSON.stringify(body), res.status]).toEqual([path, JSON.stringify(body), 400]);
    }
  });
});

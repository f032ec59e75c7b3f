/**
 * A tiny worker for `bench/micro.ts`: `GET /<op>?n=N` runs one step of the buy path N times inside
 * workerd, so the step's CPU can be read from the workerd process. The steps are the project's own
 * code and libraries (hono/jwt, the Bloom filter of src/catalog/catalog.ts, the env parser,
 * @upstash/redis, @upstash/qstash), with outbound calls going to a no-op server (`NOOP_URL`).
 */
import { Client } from "@upstash/qstash";
import { Redis } from "@upstash/redis/cloudflare";
import { createChallenge } from "altcha-lib/v1";
import { Hono } from "hono";
import { verify } from "hono/jwt";
import { buildTokenFilter, parseTokenFilter } from "../../src/catalog/catalog";
import { type Env, readConfig } from "../../src/env";
import { parseJsonObject, readBoundedBody } from "../../src/http/read-body";
import { signAdmission, verifyAdmission } from "../../src/room/admission-token";
import { solvesJoinChallenge } from "../../src/room/challenge";
import { buyEcho } from "../../test/support/echo-routes";

type MicroEnv = Env & { NOOP_URL: string; BENCH_TOKEN: string; BENCH_PRODUCT_TOKEN: string };
type Op = (n: number, env: MicroEnv, ctx: ExecutionContext) => Promise<void>;

const encoder = new TextEncoder();
let lastEnv: object | null = null;
let cachedKey: Promise<CryptoKey> | null = null;
let filter: ReturnType<typeof parseTokenFilter> | null = null;
let redis: Redis | null = null;
let qstash: Client | null = null;

async function times(n: number, parallel: number, step: () => Promise<unknown>): Promise<void> {
  for (let i = 0; i < n; i += parallel) {
    await Promise.all(Array.from({ length: Math.min(parallel, n - i) }, step));
  }
}

function fromBase64url(s: string): Uint8Array<ArrayBuffer> {
  const b = atob(s.replace(/-/g, "+").replace(/_/g, "/"));
  const out = new Uint8Array(new ArrayBuffer(b.length));
  for (let i = 0; i < b.length; i++) out[i] = b.charCodeAt(i);
  return out;
}

/** The buy route's input checks as they were written by hand before the schemas (2026-11-22): the baseline. */
const handwritten = new Hono().post("/api/buy/:productToken", async (c) => {
  const body = parseJsonObject(await readBoundedBody(c.req.raw, 1024));
  const quantity = "quantity" in body ? body.quantity : 1;
  if (typeof quantity !== "number" || !Number.isInteger(quantity) || quantity < 1 || quantity > 10_000)
    return c.json({ error: "quantity" }, 400);
  const key = c.req.header("Idempotency-Key");
  if (key !== undefined && !/^[\x21-\x7e]{1,128}$/.test(key)) return c.json({ error: "key" }, 400);
  return c.json({ quantity, key: key ?? null, token: c.req.param("productToken") });
});

/** The same checks from the buy route's description (schemas + body middleware), as the engine runs them. */
const described = buyEcho();
const describedApp = new Hono().route("/api/buy", described);

const buyRequest = () =>
  new Request(`http://bench/api/buy/${"Q".repeat(43)}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "Idempotency-Key": "click-1" },
    body: '{"quantity":2}',
  });

async function answered(app: { fetch(req: Request): Response | Promise<Response> }, req: Request) {
  const res = await app.fetch(req);
  if (res.status !== 200) throw new Error(`checks refused the request: ${res.status}`);
  await res.text();
}

/** A solved join challenge (the number given, so nothing is solved here) for sale "s1" and user "u1". */
async function solvedJoin(env: MicroEnv): Promise<string> {
  const hmacKey = `flash-sale altcha key\u0000${env.JWT_SECRET}`;
  const c = await createChallenge({
    hmacKey,
    number: 12_345,
    maxnumber: 20_000,
    params: { sale: "s1", user: "u1" },
    expires: new Date(Date.now() + 600_000),
  });
  return btoa(JSON.stringify({ ...c, number: 12_345 }));
}

const admissionConfig = (env: MicroEnv) => ({ JWT_SECRET: env.JWT_SECRET, ADMISSION_SECRET: undefined });

const ops: Record<string, Op> = {
  /** The join's proof-of-work check (altcha-lib verifySolution plus the binding to sale and user). */
  "altcha-verify": async (n, env) => {
    const payload = await solvedJoin(env);
    const config = { ...admissionConfig(env), ALTCHA_HMAC_KEY: undefined, ALTCHA_MAX_NUMBER: 20_000 };
    await times(n, 1, async () => {
      if (!(await solvesJoinChallenge(config, payload, { saleId: "s1", userId: "u1" })))
        throw new Error("bad");
    });
  },
  /** The buy's admission check of a queue sale (jose HS256, key derived once). */
  "admission-verify": async (n, env) => {
    const at = { saleId: "s1", userId: "u1" };
    const token = await signAdmission(admissionConfig(env), {
      ...at,
      ticketId: "t",
      units: 1,
      expiresAt: Date.now() + 600_000,
    });
    await times(n, 1, async () => {
      if (!(await verifyAdmission(admissionConfig(env), token, { ...at, now: Date.now() })))
        throw new Error("bad");
    });
  },
  /** Baseline: the buy route's body and header checks written by hand, routed by Hono. */
  "buy-checks-handwritten": (n) => times(n, 1, () => answered(handwritten, buyRequest())),
  /** The same checks from the route's zod description (@hono/zod-openapi), routed the same way. */
  "buy-checks-schema": (n) => times(n, 1, () => answered(describedApp, buyRequest())),
  /** What the buy route does today: hono/jwt verify (imports the HMAC key on every call). */
  "jwt-verify": (n, env) => times(n, 1, () => verify(env.BENCH_TOKEN, env.JWT_SECRET, "HS256")),
  /** The same check with the key imported once per isolate. */
  "jwt-verify-cached-key": async (n, env) => {
    cachedKey ??= crypto.subtle.importKey(
      "raw",
      encoder.encode(env.JWT_SECRET),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["verify"],
    );
    const key = await cachedKey;
    await times(n, 1, async () => {
      const [h, p, s] = env.BENCH_TOKEN.split(".");
      const ok = await crypto.subtle.verify("HMAC", key, fromBase64url(s ?? ""), encoder.encode(`${h}.${p}`));
      const claims = JSON.parse(new TextDecoder().decode(fromBase64url(p ?? ""))) as {
        sub?: string;
        exp?: number;
      };
      if (!ok || !claims.sub || (claims.exp ?? 0) * 1000 < Date.now()) throw new Error("bad token");
    });
  },
  /** `ctx.waitUntil` of a settled promise, as the buy route does on every request (catalog refresh check). */
  "wait-until": (n, _env, ctx) =>
    times(n, 1, async () => ctx.waitUntil(Promise.resolve().catch(() => undefined))),
  /** The Bloom filter check the buy route runs on every product token. */
  "bloom-has": async (n, env) => {
    filter ??= parseTokenFilter(buildTokenFilter([env.BENCH_PRODUCT_TOKEN, "a".repeat(43)]));
    const f = filter;
    await times(n, 1, async () => f.has(env.BENCH_PRODUCT_TOKEN));
  },
  /** The env parse, when it is not cached (a new env object each request would pay this). */
  "config-parse": (n, env) => times(n, 1, async () => readConfig({ ...env })),
  /** `new Client()` of @upstash/qstash, as enqueue-order.ts does for every publish. */
  "qstash-new-client": (n, env) =>
    times(n, 1, async () => new Client({ token: "t", baseUrl: `${env.NOOP_URL}/qstash` })),
  /** One plain fetch to a server that answers at once: the cost of a subrequest in workerd. */
  "fetch-subrequest": (n, env) =>
    times(n, 8, async () => (await fetch(`${env.NOOP_URL}/plain`, { method: "POST", body: "{}" })).text()),
  /** A reservation-sized EVALSHA through @upstash/redis (client cached, as the worker does). */
  "upstash-script-exec": async (n, env) => {
    redis ??= new Redis({
      url: `${env.NOOP_URL}/redis`,
      token: "t",
      automaticDeserialization: false,
      enableTelemetry: false,
    });
    const script = redis.createScript("return 1");
    const keys = Array.from({ length: 10 }, (_, i) => `sale:{s:bench}:k${i}`);
    const args = [
      "1700000000000",
      "sbench-abcdefghijklmnopqrst",
      "user-1",
      "1",
      "0",
      "86400",
      "5",
      "50",
      "10000",
      "604800",
    ];
    await times(n, 8, () => script.exec(keys, args));
  },
  /** The order's two jobs in one QStash batch, client created per call (as today). */
  "qstash-batch-new-client": (n, env) =>
    times(n, 8, () => new Client({ token: "t", baseUrl: `${env.NOOP_URL}/qstash` }).batchJSON(jobs(env))),
  /** The same batch with one client per isolate. */
  "qstash-batch-cached-client": async (n, env) => {
    qstash ??= new Client({ token: "t", baseUrl: `${env.NOOP_URL}/qstash` });
    const client = qstash;
    await times(n, 8, () => client.batchJSON(jobs(env)));
  },
};

function jobs(env: MicroEnv) {
  const order = {
    orderId: "sbench-abcdefghijklmnopqrst",
    saleId: "sbench",
    userId: "user-1",
    quantity: 1,
    createdAt: 1,
    expiresAt: 2,
  };
  const common = { body: order, retries: 5, failureCallback: `${env.NOOP_URL}/failed` };
  return [
    { url: `${env.NOOP_URL}/write`, deduplicationId: `write-${order.orderId}`, ...common },
    { url: `${env.NOOP_URL}/timeout`, deduplicationId: `timeout-${order.orderId}`, notBefore: 2, ...common },
  ];
}

export default {
  async fetch(request: Request, env: MicroEnv, ctx: ExecutionContext): Promise<Response> {
    const url = new URL(request.url);
    const name = url.pathname.slice(1);
    const op = ops[name];
    if (!op) return Response.json({ ops: Object.keys(ops) }, { status: 404 });
    const envStable = lastEnv === null ? null : lastEnv === env;
    lastEnv = env;
    await op(Number(url.searchParams.get("n") ?? 0), env, ctx);
    return Response.json({ op: name, envStable });
  },
} satisfies ExportedHandler<MicroEnv>;

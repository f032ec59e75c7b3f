/**
 * The naive baseline: the obvious flash-sale server, one Postgres transaction per attempt on a hot row
 * (bench/baselines/naive-db.ts), with a pooled `pg` client. It checks the shopper's HS256 token like the engine
 * does, and answers in the contract's shapes (202 with an order id, 410 SOLD_OUT) so the same load
 * generator drives it. No rate limit, no per-user limit, no idempotency: the baseline is the transaction
 * itself.
 *
 * It runs on the runtime the engine it is compared with runs on. Node: node:http, forked by the bench
 * through tsx (`NAIVE_DATABASE_URL`, `JWT_SECRET`, `NAIVE_POOL`; it reports its port over IPC). Bun and
 * Deno: the bundle bench/phases/runtimes.ts builds of this file, served by `Bun.serve` / `Deno.serve` like the
 * engine's entries (src/runtime/bun.ts, deno.ts), or by their node:http with `NAIVE_HTTP=node`; it
 * listens on `NAIVE_PORT` and prints `listening <port>`.
 */
import { createServer, type IncomingMessage } from "node:http";
import pg from "pg";
import { verifyShopperToken } from "../clients/jwt";
import { naiveBuy } from "./naive-db";

type Answer = { status: number; body: string };
type Handle = (method: string, path: string, authorization: string | null, text: string) => Promise<Answer>;

const answer = (status: number, body: unknown): Answer => ({ status, body: JSON.stringify(body) });
const error = (status: number, code: string, message: string) => answer(status, { error: { code, message } });

/** The whole baseline as one function of the request's parts (shared by every HTTP server below). */
export function naiveHandler(options: { databaseUrl: string; jwtSecret: string; pool: number }): Handle {
  const pool = new pg.Pool({ connectionString: options.databaseUrl, max: options.pool });
  return async (method, path, authorization, text) => {
    try {
      if (method !== "POST" || !path.startsWith("/buy/")) return error(404, "NOT_FOUND", "No such route.");
      const token = /^Bearer (.+)$/.exec(authorization ?? "")?.[1];
      const userId = token ? verifyShopperToken(options.jwtSecret, token) : null;
      if (!userId) return error(401, "UNAUTHENTICATED", "Sign in.");
      const quantity = text ? Number((JSON.parse(text) as { quantity?: unknown }).quantity ?? 1) : 1;
      if (!Number.isInteger(quantity) || quantity < 1) return error(400, "INVALID_REQUEST", "Bad quantity.");
      const order = await naiveBuy(pool, userId, quantity);
      if (!order) return error(410, "SOLD_OUT", "Sold out.");
      return answer(202, { orderId: order.orderId, status: "queued", quantity });
    } catch (e) {
      return error(503, "UNAVAILABLE", String((e as Error).message));
    }
  };
}

async function readBody(req: IncomingMessage): Promise<string> {
  let body = "";
  for await (const chunk of req) body += chunk;
  return body;
}

/** node:http (Node, or Bun's and Deno's node:http). */
function serveNode(handle: Handle, port: number): Promise<number> {
  const server = createServer(async (req, res) => {
    const text = await readBody(req);
    const a = await handle(req.method ?? "GET", req.url ?? "/", req.headers.authorization ?? null, text);
    res.writeHead(a.status, {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(a.body),
    });
    res.end(a.body);
  });
  server.keepAliveTimeout = 60_000;
  return new Promise((resolve) =>
    server.listen(port, "127.0.0.1", () => {
      const address = server.address();
      resolve(typeof address === "object" && address ? address.port : 0);
    }),
  );
}

/** The runtime's own server (`Bun.serve`, `Deno.serve`) with a fetch handler, as the engine uses. */
async function serveNative(handle: Handle, port: number): Promise<number> {
  const fetch = async (request: Request): Promise<Response> => {
    const url = request.url;
    const path = url.slice(url.indexOf("/", url.indexOf("//") + 2));
    const a = await handle(request.method, path, request.headers.get("authorization"), await request.text());
    return new Response(a.body, { status: a.status, headers: { "content-type": "application/json" } });
  };
  if (typeof Bun !== "undefined")
    return Bun.serve({ port, hostname: "127.0.0.1", idleTimeout: 0, fetch }).port;
  return new Promise((resolve) => {
    Deno.serve({ port, hostname: "127.0.0.1", onListen: (addr) => resolve(addr.port) }, fetch);
  });
}

const isMain = process.env.NAIVE_SERVE === "1" || import.meta.url === `file://${process.argv[1]}`;
if (isMain) {
  const handle = naiveHandler({
    databaseUrl: process.env.NAIVE_DATABASE_URL ?? "",
    jwtSecret: process.env.JWT_SECRET ?? "",
    pool: Number(process.env.NAIVE_POOL ?? 10),
  });
  const native = typeof Bun !== "undefined" || typeof Deno !== "undefined";
  const port = Number(process.env.NAIVE_PORT ?? 0);
  const listening =
    native && process.env.NAIVE_HTTP !== "node" ? serveNative(handle, port) : serveNode(handle, port);
  void listening.then((p) => {
    if (process.send) process.send({ type: "listening", port: p });
    else console.log(`listening ${p}`);
  });
}

/**
 * A local stand-in for the Upstash Redis REST API, in front of a real redis-server, speaking what
 * `@upstash/redis` 1.39 sends (read from its `pkg/http.ts`, `pkg/pipeline.ts`, `pkg/script.ts`):
 *
 * - `POST /` with a JSON command `["SET","k","v"]` → 200 `{"result": …}`; a Redis error → 400 `{"error"}`;
 *   `POST /pipeline` and `POST /multi-exec` with `[[…],[…]]` → 200 `[{"result"}|{"error"}, …]`
 *   (multi-exec runs MULTI … EXEC on a connection of its own, so it is atomic);
 * - `Upstash-Encoding: base64`: every string in a reply is base64, nested arrays too, except a top-level
 *   plain `"OK"`; integers stay numbers, nil is `null`; replies keep RESP2 shapes (flat HGETALL arrays);
 * - `Authorization: Bearer <token>` (or `?_token=`) is checked: 401 otherwise;
 * - every answer carries an `upstash-sync-token` header (read-your-writes; one Redis needs no waiting);
 * - EVALSHA of an unknown script returns Redis' own `NOSCRIPT …` text, so `createScript` falls back to EVAL;
 * - commands that would take over a shared connection (SUBSCRIBE, MONITOR, SELECT, blocking pops, …)
 *   are refused with 400, and the `/subscribe` streaming paths are not implemented;
 * - Redis down or slow: 503 `{"error"}` within about `timeoutMs` (default 2 s), never a hang.
 *
 * @example
 * const rest = await startUpstashRedisServer({ port: 0, redisUrl: "redis://127.0.0.1:6390", token: "t" });
 * const redis = new Redis({ url: rest.url, token: "t" }); // from "@upstash/redis"
 */
import { createServer, type IncomingMessage } from "node:http";
import { ReplyError } from "ioredis";
import {
  bearer,
  closeServer,
  header,
  listen,
  errorMessage as message,
  readBody,
  sendJson,
} from "./http-util";
import { LOOPBACK } from "./ports";
import { createRedisConnections, run } from "./redis-connections";

export type UpstashRedisServerOptions = {
  /** 0 or absent: a free port. */
  port?: number;
  /** The redis-server behind it, e.g. `redis://127.0.0.1:6390`. */
  redisUrl: string;
  /** The bearer token clients must send (`UPSTASH_REDIS_REST_TOKEN`). */
  token: string;
  /** How long a command may take before the request fails with 503. Default 2,000 ms. */
  timeoutMs?: number;
};

export type UpstashRedisServer = { url: string; port: number; close(): Promise<void> };

/** Commands that would change or block a shared connection, or belong to other endpoints. */
const REFUSED = new Set(
  [
    "SUBSCRIBE PSUBSCRIBE SSUBSCRIBE UNSUBSCRIBE PUNSUBSCRIBE SUNSUBSCRIBE MONITOR SELECT SWAPDB HELLO AUTH",
    "RESET QUIT SYNC PSYNC REPLCONF MULTI EXEC DISCARD WATCH UNWATCH CLIENT SHUTDOWN DEBUG WAIT WAITAOF",
    "BLPOP BRPOP BRPOPLPUSH BLMOVE BLMPOP BZPOPMIN BZPOPMAX BZMPOP",
  ]
    .join(" ")
    .split(" "),
);
type Reply = { status: number; body: unknown };

/** Starts the REST server; resolves once it listens (Redis may still be connecting). */
export async function startUpstashRedisServer(
  options: UpstashRedisServerOptions,
): Promise<UpstashRedisServer> {
  const timeoutMs = options.timeoutMs ?? 2_000;
  const conns = createRedisConnections({ redisUrl: options.redisUrl, shared: 4, exclusive: 4, timeoutMs });
  let syncToken = 0;

  const single = async (command: string[], base64: boolean): Promise<Reply> => {
    try {
      return { status: 200, body: { result: encode(await run(conns.shared(), command), base64, true) } };
    } catch (error) {
      return failure(error);
    }
  };

  const pipeline = async (commands: string[][], base64: boolean): Promise<Reply> => {
    const conn = conns.shared();
    const settled = await Promise.allSettled(commands.map((c) => run(conn, c)));
    const down = settled.find((s) => s.status === "rejected" && !(s.reason instanceof ReplyError));
    if (down?.status === "rejected") return failure(down.reason);
    return { status: 200, body: settled.map((s) => item(s, base64)) };
  };

  const multiExec = async (commands: string[][], base64: boolean): Promise<Reply> => {
    let conn: Awaited<ReturnType<typeof conns.borrow>>;
    try {
      conn = await conns.borrow();
    } catch (error) {
      return failure(error);
    }
    let healthy = true;
    try {
      const queued = Promise.allSettled([["MULTI"], ...commands].map((c) => run(conn, c)));
      const exec = run(conn, ["EXEC"]);
      exec.catch(() => undefined);
      const refused = (await queued).find((s) => s.status === "rejected");
      if (refused?.status === "rejected" && refused.reason instanceof ReplyError) {
        await exec.catch(() => undefined);
        return badRequest(`EXECABORT Transaction discarded: ${message(refused.reason)}`);
      }
      const replies = await exec;
      if (!Array.isArray(replies)) return badRequest("EXECABORT Transaction discarded");
      return { status: 200, body: replies.map((r) => item(settle(r), base64)) };
    } catch (error) {
      healthy = error instanceof ReplyError;
      return failure(error);
    } finally {
      conns.giveBack(conn, healthy);
    }
  };

  const handle = async (req: IncomingMessage): Promise<Reply> => {
    const url = new URL(req.url ?? "/", "http://local");
    const token = bearer(req) ?? url.searchParams.get("_token");
    if (token !== options.token) return { status: 401, body: { error: "Unauthorized" } };
    const base64 = header(req, "upstash-encoding").toLowerCase() === "base64";
    const path = url.pathname.replace(/\/+$/, "");
    const raw = (await readBody(req)).toString("utf8");
    const jsonBody = path === "" || path === "/pipeline" || path === "/multi-exec";
    let parsed: unknown;
    try {
      parsed = jsonBody && raw.length > 0 ? JSON.parse(raw) : undefined;
    } catch {
      return badRequest("ERR failed to parse JSON body");
    }
    if (path === "/pipeline" || path === "/multi-exec") {
      if (!Array.isArray(parsed) || parsed.length === 0)
        return badRequest("ERR expected an array of commands");
      const commands = parsed.map(toCommand);
      const invalid = commands.find((c) => typeof c === "string");
      if (typeof invalid === "string") return badRequest(invalid);
      const valid = commands as string[][];
      return path === "/pipeline" ? pipeline(valid, base64) : multiExec(valid, base64);
    }
    if (/^\/(p?subscribe|monitor)(\/|$)/i.test(path))
      return badRequest("ERR streaming endpoints are not supported");
    // Path form: POST /set/key/value (the body, if any, is the last argument).
    const command =
      path === ""
        ? toCommand(parsed)
        : toCommand([...path.slice(1).split("/").map(decodeURIComponent), ...(raw ? [raw] : [])]);
    return typeof command === "string" ? badRequest(command) : single(command, base64);
  };

  const server = createServer((req, res) => {
    handle(req)
      .catch((error: unknown) => ({ status: 400, body: { error: `ERR ${message(error)}` } }))
      .then((reply) =>
        sendJson(res, reply.status, reply.body, { "upstash-sync-token": String(++syncToken) }),
      );
  });
  const port = await listen(server, options.port);
  await conns.ready(timeoutMs);
  return {
    url: `http://${LOOPBACK}:${port}`,
    port,
    async close() {
      await closeServer(server);
      await conns.close();
    },
  };
}

/** A JSON command as strings, or the error text explaining why it is not one. */
function toCommand(value: unknown): string[] | string {
  if (!Array.isArray(value) || value.length === 0) return "ERR expected a command array";
  const args = value.map((v) =>
    typeof v === "string" ? v : typeof v === "number" || typeof v === "boolean" ? String(v) : null,
  );
  if (args.some((a) => a === null)) return "ERR command arguments must be strings or numbers";
  const name = (args[0] as string).toUpperCase();
  if (REFUSED.has(name)) return `ERR command '${name}' is not supported by the local Upstash REST server`;
  return args as string[];
}

/** A RESP2 reply in Upstash's JSON form. */
function encode(value: unknown, base64: boolean, top: boolean): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === "number") return value;
  if (Array.isArray(value)) return value.map((v) => encode(v, base64, false));
  if (value instanceof Error) return encode(Buffer.from(value.message), base64, top);
  const bytes = Buffer.isBuffer(value) ? value : Buffer.from(String(value));
  if (!base64) return bytes.toString("utf8");
  return top && bytes.length === 2 && bytes.toString() === "OK" ? "OK" : bytes.toString("base64");
}

function settle(reply: unknown): PromiseSettledResult<unknown> {
  return reply instanceof Error
    ? { status: "rejected", reason: reply }
    : { status: "fulfilled", value: reply };
}

function item(s: PromiseSettledResult<unknown>, base64: boolean) {
  return s.status === "fulfilled" ? { result: encode(s.value, base64, true) } : { error: message(s.reason) };
}

function failure(error: unknown): Reply {
  if (error instanceof ReplyError) return { status: 400, body: { error: message(error) } };
  return { status: 503, body: { error: `ERR Redis unavailable: ${message(error)}` } };
}

function badRequest(error: string): Reply {
  return { status: 400, body: { error } };
}

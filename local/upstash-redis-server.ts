/**
 * A local stand-in for the Upstash Redis REST API (https://upstash.com/docs/redis/features/restapi), in
 * front of a real redis-server, speaking what `@upstash/redis` 1.39 sends (read from its `pkg/http.ts`,
 * `pkg/pipeline.ts`, `pkg/script.ts`):
 *
 * - `POST /` with a JSON command `["SET","k","v"]` → 200 `{"result": …}`; a Redis error → 400 `{"error"}`;
 *   `POST /pipeline` with `[[…],[…]]` → 200 `[{"result"}|{"error"}, …]`, a refused command answered in its
 *   own slot; `POST /multi-exec` runs MULTI … EXEC on a connection of its own (atomic), and a refused
 *   command discards the whole transaction (400), as the docs say;
 * - the path form `/set/k/v?EX=100` (query arguments appended as `EX 100`, the body, if any, before them);
 *   HEAD, GET, POST and PUT only, 405 otherwise;
 * - replies: see `upstash-reply.ts` (base64 encoding, integers with all their digits);
 * - `Authorization: Bearer <token>` (or `?_token=`) is checked: 401 otherwise;
 * - every answer carries an `upstash-sync-token` header (read-your-writes; one Redis needs no waiting);
 * - EVALSHA of an unknown script returns Redis' own `NOSCRIPT …` text, so `createScript` falls back to EVAL;
 * - blocking commands (BLPOP …, XREAD … BLOCK) hold the request on a connection of their own until they
 *   return; commands Upstash refuses, or that would take over a shared connection, get 400 (see
 *   `upstash-commands.ts`); the `/subscribe` and `/monitor` streaming paths are not implemented;
 * - Redis down: 503 `{"error"}` at once. Redis slow: the request waits for the reply, as on Upstash.
 * - fault mode `replyTimeoutMs` (off by default; `setFaults`): answer 503 after that many milliseconds
 *   while the command goes on in Redis and may still commit — what a client sees when its request times
 *   out after the write (a client that retries then applies it twice).
 *
 * @example
 * const rest = await startUpstashRedisServer({ port: 0, redisUrl: "redis://127.0.0.1:6390", token: "t" });
 * const redis = new Redis({ url: rest.url, token: "t" }); // from "@upstash/redis"
 * rest.setFaults({ replyTimeoutMs: 2_000 }); // later commands still running at 2 s are answered 503
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Redis } from "ioredis";
import { ReplyError } from "ioredis";
import { bearer, closeServer, header, listen, errorMessage as message, readBody } from "./http-util";
import { LOOPBACK } from "./ports";
import { createRedisConnections, run } from "./redis-connections";
import { isBlocking, toCommand } from "./upstash-commands";
import { reply, replyJson } from "./upstash-reply";

export type UpstashFaults = {
  /** Answer 503 after this many ms while the command goes on in Redis (null: off, the default). */
  replyTimeoutMs: number | null;
};

export type UpstashRedisServerOptions = {
  /** 0 or absent: a free port. */
  port?: number;
  /** The redis-server behind it, e.g. `redis://127.0.0.1:6390`. */
  redisUrl: string;
  /** The bearer token clients must send (`UPSTASH_REDIS_REST_TOKEN`). */
  token: string;
  /** Connect timeout and the wait for a free transaction connection. Default 2,000 ms. */
  timeoutMs?: number;
  faults?: Partial<UpstashFaults>;
};

export type UpstashRedisServer = {
  url: string;
  port: number;
  setFaults(faults: Partial<UpstashFaults>): void;
  faults(): UpstashFaults;
  close(): Promise<void>;
};

type Reply = { status: number; body: unknown };

const METHODS = new Set(["HEAD", "GET", "POST", "PUT"]);

/** Starts the REST server; resolves once it listens (Redis may still be connecting). */
export async function startUpstashRedisServer(
  options: UpstashRedisServerOptions,
): Promise<UpstashRedisServer> {
  const timeoutMs = options.timeoutMs ?? 2_000;
  const conns = createRedisConnections({ redisUrl: options.redisUrl, shared: 4, exclusive: 4, timeoutMs });
  let faults: UpstashFaults = { replyTimeoutMs: null, ...options.faults };
  let syncToken = 0;

  /** A connection of its own for a blocking command, dropped when done or when the client leaves. */
  const dedicated = async <T>(res: ServerResponse, work: (conn: Redis) => Promise<T>): Promise<T> => {
    const conn = await conns.dedicated();
    const drop = () => conn.disconnect();
    res.once("close", drop);
    try {
      return await work(conn);
    } finally {
      res.off("close", drop);
      drop();
    }
  };

  const single = async (command: string[], base64: boolean, res: ServerResponse): Promise<Reply> => {
    try {
      const value = isBlocking(command)
        ? await dedicated(res, (conn) => run(conn, command))
        : await run(conns.shared(), command);
      return { status: 200, body: { result: reply(value, base64) } };
    } catch (error) {
      return failure(error);
    }
  };

  const pipeline = async (
    commands: Array<string[] | string>,
    base64: boolean,
    res: ServerResponse,
  ): Promise<Reply> => {
    const valid = commands.filter((c): c is string[] => typeof c !== "string");
    const runAll = (conn: Redis) => Promise.allSettled(valid.map((c) => run(conn, c)));
    let settled: PromiseSettledResult<unknown>[];
    try {
      settled = valid.some(isBlocking) ? await dedicated(res, runAll) : await runAll(conns.shared());
    } catch (error) {
      return failure(error);
    }
    const down = settled.find((s) => s.status === "rejected" && !(s.reason instanceof ReplyError));
    if (down?.status === "rejected") return failure(down.reason);
    const results = settled.values();
    const body = commands.map((c) =>
      typeof c === "string"
        ? { error: c }
        : item(results.next().value as PromiseSettledResult<unknown>, base64),
    );
    return { status: 200, body };
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

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<Reply> => {
    if (!METHODS.has(req.method ?? "")) return { status: 405, body: { error: "ERR method not allowed" } };
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
      if (path === "/pipeline") return pipeline(commands, base64, res);
      const invalid = commands.find((c) => typeof c === "string");
      if (typeof invalid === "string") return badRequest(invalid);
      return multiExec(commands as string[][], base64);
    }
    if (/^\/(p?subscribe|monitor)(\/|$)/i.test(path))
      return badRequest("ERR streaming endpoints are not supported");
    // Path form: POST /set/key/value?EX=100 (the body, if any, then the query arguments, in order).
    const query = [...url.searchParams]
      .filter(([k]) => k !== "_token")
      .flatMap(([k, v]) => (v ? [k, v] : [k]));
    const command =
      path === ""
        ? toCommand(parsed)
        : toCommand([...path.slice(1).split("/").map(decodeURIComponent), ...(raw ? [raw] : []), ...query]);
    return typeof command === "string" ? badRequest(command) : single(command, base64, res);
  };

  /** The request's reply, or the injected 503 once `replyTimeoutMs` passes first. */
  const answer = (req: IncomingMessage, res: ServerResponse): Promise<Reply> => {
    const handled = handle(req, res).catch((error: unknown) => badRequest(`ERR ${message(error)}`));
    const limit = faults.replyTimeoutMs;
    if (limit === null) return handled;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<Reply>((resolve) => {
      timer = setTimeout(
        () => resolve({ status: 503, body: { error: `ERR fault: no reply within ${limit} ms` } }),
        limit,
      );
    });
    return Promise.race([handled, timedOut]).finally(() => clearTimeout(timer));
  };

  const server = createServer((req, res) => {
    void answer(req, res).then((r) => send(res, r, { "upstash-sync-token": String(++syncToken) }));
  });
  const port = await listen(server, options.port);
  await conns.ready(timeoutMs);
  return {
    url: `http://${LOOPBACK}:${port}`,
    port,
    setFaults(next) {
      faults = { ...faults, ...next };
    },
    faults: () => ({ ...faults }),
    async close() {
      await closeServer(server);
      await conns.close();
    },
  };
}

function send(res: ServerResponse, { status, body }: Reply, headers: Record<string, string>): void {
  if (res.headersSent || res.destroyed) return;
  const text = replyJson(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

function settle(reply: unknown): PromiseSettledResult<unknown> {
  return reply instanceof Error
    ? { status: "rejected", reason: reply }
    : { status: "fulfilled", value: reply };
}

function item(s: PromiseSettledResult<unknown>, base64: boolean) {
  return s.status === "fulfilled" ? { result: reply(s.value, base64) } : { error: message(s.reason) };
}

function failure(error: unknown): Reply {
  if (error instanceof ReplyError) return { status: 400, body: { error: message(error) } };
  return { status: 503, body: { error: `ERR Redis unavailable: ${message(error)}` } };
}

function badRequest(error: string): Reply {
  return { status: 400, body: { error } };
}

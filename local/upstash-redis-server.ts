/**
 * A local stand-in for the Upstash Redis REST API (https://upstash.com/docs/redis/features/restapi), in
 * front of a real redis-server, serving what `@upstash/redis` 1.39 sends (read from its `pkg/http.ts`,
 * `pkg/pipeline.ts`, `pkg/script.ts`, `pkg/commands/subscribe.ts`), routed with Hono:
 *
 * - `POST /` with a JSON command `["SET","k","v"]` → 200 `{"result": …}`; a Redis error → 400 `{"error"}`;
 *   `POST /pipeline` with `[[…],[…]]` → 200 `[{"result"}|{"error"}, …]`, a refused command answered in its
 *   own slot; `POST /multi-exec` runs MULTI … EXEC on a connection of its own (atomic), and a refused
 *   command discards the whole transaction (400), as the docs say;
 * - `POST /subscribe/<channel>` and `/psubscribe/<pattern>`: Server-Sent Events from a real SUBSCRIBE,
 *   see `upstash-subscribe.ts`;
 * - replies: see `upstash-reply.ts` (`Upstash-Encoding: base64`, integers with all their digits);
 * - `Authorization: Bearer <token>` is checked: 401 otherwise; methods other than HEAD, GET, POST and PUT
 *   get 405, as on Upstash; every answer carries an `upstash-sync-token` header (read-your-writes; one
 *   Redis needs no waiting);
 * - EVALSHA of an unknown script returns Redis' own `NOSCRIPT …` text, so `createScript` falls back to EVAL;
 * - blocking commands (BLPOP …, XREAD … BLOCK) hold the request on a connection of their own until they
 *   return; commands Upstash refuses, or that would take over a shared connection, get 400 (see
 *   `upstash-commands.ts`);
 * - not implemented, answered 501 (nothing here sends them): the path form of commands (`/set/k/v`),
 *   `/monitor` and every other path; a `?_token=` is not read (401 without the header);
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
import { type Context, Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { type OnNode, serveOnNode } from "./hono-on-node";
import { errorMessage as message } from "./http-util";
import { createRedisConnections, type RedisConnections } from "./redis-connections";
import { toCommand } from "./upstash-commands";
import { replyJson } from "./upstash-reply";
import { badRequest, createRunner, type Reply } from "./upstash-run";
import { subscribeHandler } from "./upstash-subscribe";

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

const METHODS = new Set(["HEAD", "GET", "POST", "PUT"]);
const UNAUTHORIZED_BODY = { error: "Unauthorized" };

/** Starts the REST server; resolves once it listens (Redis may still be connecting). */
export async function startUpstashRedisServer(
  options: UpstashRedisServerOptions,
): Promise<UpstashRedisServer> {
  const timeoutMs = options.timeoutMs ?? 2_000;
  const conns = createRedisConnections({ redisUrl: options.redisUrl, shared: 4, exclusive: 4, timeoutMs });
  const state: RestState = { faults: { replyTimeoutMs: null, ...options.faults }, syncToken: 0 };
  const server = await serveOnNode(restApp(options.token, conns, state), { port: options.port });
  await conns.ready(timeoutMs);
  return {
    url: server.url,
    port: server.port,
    setFaults(next) {
      state.faults = { ...state.faults, ...next };
    },
    faults: () => ({ ...state.faults }),
    async close() {
      await server.close();
      await conns.close();
    },
  };
}

/** What the server changes as it runs: the injected faults, and the last sync token sent. */
type RestState = { faults: UpstashFaults; syncToken: number };

/** The REST routes: the bearer token checked, then single commands, pipelines, transactions, subscriptions. */
function restApp(token: string, conns: RedisConnections, state: RestState) {
  const runner = createRunner(conns);
  const answer = (c: Context<OnNode>, work: Reply | Promise<Reply>) => answerWithin(c, work, state.faults);
  const base64 = (c: Context<OnNode>) => c.req.header("upstash-encoding")?.toLowerCase() === "base64";
  return (
    new Hono<OnNode>({ strict: false })
      .use(async (c, next) => {
        await next();
        c.header("upstash-sync-token", String(++state.syncToken));
      })
      .use((c, next) =>
        METHODS.has(c.req.method)
          ? next()
          : Promise.resolve(c.json({ error: "ERR method not allowed" }, 405)),
      )
      // Upstash answers 401 for a missing, malformed or wrong token alike (hono/bearer-auth says 400 to a malformed one)
      .use((c, next) =>
        c.req.header("Authorization") === `Bearer ${token}`
          ? next()
          : Promise.resolve(c.json(UNAUTHORIZED_BODY, 401)),
      )
      .post("/", async (c) => {
        const command = toCommand(await jsonBody(c));
        if (typeof command === "string") return answer(c, badRequest(command));
        return answer(c, runner.single(command, base64(c), c.env.gone));
      })
      .post("/pipeline", async (c) => {
        const commands = commandList(await jsonBody(c));
        if (typeof commands === "string") return answer(c, badRequest(commands));
        return answer(c, runner.pipeline(commands, base64(c), c.env.gone));
      })
      .post("/multi-exec", async (c) => {
        const commands = commandList(await jsonBody(c));
        const invalid = typeof commands === "string" ? commands : commands.find((x) => typeof x === "string");
        if (typeof invalid === "string") return answer(c, badRequest(invalid));
        return answer(c, runner.multiExec(commands as string[][], base64(c)));
      })
      .post("/subscribe/*", subscribeHandler(conns, "subscribe"))
      .post("/psubscribe/*", subscribeHandler(conns, "psubscribe"))
      .notFound((c) =>
        c.json(
          {
            error: `ERR ${c.req.method} ${c.req.path} is not implemented by the local Upstash REST server (send commands as JSON to POST /, /pipeline or /multi-exec)`,
          },
          501,
        ),
      )
      .onError((error, c) =>
        error instanceof HTTPException
          ? error.getResponse()
          : c.json({ error: `ERR ${message(error)}` }, 400),
      )
  );
}

/** Answers the reply as Upstash's JSON, or the injected 503 once `replyTimeoutMs` passes first. */
async function answerWithin(c: Context<OnNode>, work: Reply | Promise<Reply>, faults: UpstashFaults) {
  const limit = faults.replyTimeoutMs;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<Reply>((resolve) => {
    if (limit !== null)
      timer = setTimeout(() => resolve(unavailable(`ERR fault: no reply within ${limit} ms`)), limit);
  });
  const { status, body } = await Promise.race([Promise.resolve(work), timedOut]).finally(() =>
    clearTimeout(timer),
  );
  return c.body(replyJson(body), status as ContentfulStatusCode, { "content-type": "application/json" });
}

/** The request's JSON body; a body that is not JSON is refused as Upstash does. */
async function jsonBody(c: Context): Promise<unknown> {
  const raw = await c.req.text();
  try {
    return raw.length > 0 ? JSON.parse(raw) : undefined;
  } catch {
    throw new HTTPException(400, { res: c.json({ error: "ERR failed to parse JSON body" }, 400) });
  }
}

function commandList(parsed: unknown): Array<string[] | string> | string {
  if (!Array.isArray(parsed) || parsed.length === 0) return "ERR expected an array of commands";
  return parsed.map(toCommand);
}

function unavailable(error: string): Reply {
  return { status: 503, body: { error } };
}

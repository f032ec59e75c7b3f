/**
 * A local stand-in for QStash, compatible with `@upstash/qstash` 2.12's `Client` for what the engine calls
 * (`publishJSON`, `batchJSON`; read from its `client.ts`, `utils.ts`); deliveries verify with its
 * `Receiver`. Routed with Hono:
 *
 * - `POST /v2/publish/<destination URL>` → 201 `{"messageId","url","deduplicated"?}` (headers: see
 *   `qstash-publish.ts`); `POST /v2/batch` with `[{destination, headers, body}]` →
 *   `[{messageId, url, deduplicated?}]`, every entry checked before any is enqueued (one invalid entry:
 *   400 naming it, nothing published, so a retry cannot duplicate the others; see `qstash-intake.ts`);
 * - refused with 400 naming the feature rather than ignored (the project uses neither): queues
 *   (`/v2/enqueue/<queue>/…`, a batch entry's `queue`) and flow control (`Upstash-Flow-Control-Key` /
 *   `-Value`); every other `/v2/…` endpoint (messages, DLQ, keys, schedules, topics, …) answers 501: the
 *   engine never calls them (tests read the DLQ and cancel messages in process: `dlq()`, `scheduler`);
 * - `Authorization: Bearer <token>` on everything, 401 otherwise; errors are `{"error": "…"}`;
 * - a deduplication id seen before (server lifetime) is not enqueued again: `deduplicated: true`;
 * - controls for the benchmark, which runs the stack in another process: `GET /__local/state`,
 *   `POST /__local/pause`, `POST /__local/resume`.
 * Delivery, retries, callbacks and the DLQ: see `qstash-scheduler.ts`.
 *
 * @example
 * const qstash = await startQStashServer({ port: 0, token, currentSigningKey, nextSigningKey, retryBaseMs: 50 });
 * await new Client({ token, baseUrl: qstash.url }).publishJSON({ url, body: { orderId } });
 * await qstash.idle(5_000);
 */
import { type Context, Hono } from "hono";
import { bearerAuth } from "hono/bearer-auth";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { type OnNode, serveOnNode } from "./hono-on-node";
import { errorMessage } from "./http-util";
import { createIntake, type Reply, unsupported } from "./qstash-intake";
import type { DlqEntry } from "./qstash-message";
import { createScheduler, type DeliveryCounters, type Faults, type Scheduler } from "./qstash-scheduler";

export type QStashServerOptions = {
  /** 0 or absent: a free port. */
  port?: number;
  token: string;
  currentSigningKey: string;
  nextSigningKey: string;
  /** Backoff base: retry n waits retryBaseMs * 2^(n-1), capped at maxBackoffMs. Default 1,000 ms. */
  retryBaseMs?: number;
  /** Default 30,000 ms. */
  maxBackoffMs?: number;
  /** Retries when the publisher sets no `Upstash-Retries`. Default 3. */
  maxRetries?: number;
  /** Deliveries in flight at once. Default 32. */
  concurrency?: number;
  faults?: Partial<Faults>;
  /** How deliveries are sent (a `fetch` that trusts a proxy's test certificate); default the global one. */
  fetch?: typeof fetch;
};

export type QStashServer = {
  url: string;
  port: number;
  close(): Promise<void>;
  pause(): void;
  resume(): void;
  setFaults(faults: Partial<Faults>): void;
  faults(): Faults;
  /** Messages not yet delivered or dead-lettered, however far ahead (callbacks and duplicates included). */
  pending(): number;
  /** Live counters: published, attempts, delivered, retries, failed, duplicates, callbacks, cancelled. */
  delivered: DeliveryCounters;
  dlq(): DlqEntry[];
  /**
   * Resolves once nothing is in flight or waiting for a retry and nothing falls due within `timeoutMs`
   * (messages scheduled later do not hold it up); rejects when that does not happen within `timeoutMs`.
   */
  idle(timeoutMs?: number): Promise<void>;
  scheduler: Scheduler;
};

const UNAUTHORIZED = { message: { error: "Unauthorized" } };

export async function startQStashServer(options: QStashServerOptions): Promise<QStashServer> {
  const scheduler = createScheduler({ ...options, signingKey: () => options.currentSigningKey });
  const intake = createIntake(scheduler, options.maxRetries ?? 3);

  const state = () => ({
    paused: scheduler.faults().pauseDelivery,
    faults: scheduler.faults(),
    pending: scheduler.pending(),
    inFlight: scheduler.inFlight(),
    counters: scheduler.counters,
    dlq: scheduler.dlq().length,
  });

  const app = new Hono<OnNode>({ strict: false })
    .use(
      bearerAuth({
        verifyToken: (token) => token === options.token,
        noAuthenticationHeader: UNAUTHORIZED,
        invalidToken: UNAUTHORIZED,
      }),
    )
    .post("/v2/publish/*", async (c) => {
      const raw = c.req.url.slice(c.req.url.indexOf("/v2/publish/") + "/v2/publish/".length);
      const destination = /^https?%3A/i.test(raw) ? decodeURIComponent(raw) : raw;
      const body = Buffer.from(await c.req.arrayBuffer());
      return send(c, intake.publish(destination, c.req.raw.headers, body));
    })
    .post("/v2/batch", async (c) => send(c, intake.batch(JSON.parse((await c.req.text()) || "null"))))
    .all("/v2/enqueue/*", (c) => send(c, unsupported("queues (/v2/enqueue)")))
    .get("/__local/state", (c) => c.json(state()))
    .post("/__local/pause", (c) => {
      scheduler.setFaults({ pauseDelivery: true });
      return c.json(state());
    })
    .post("/__local/resume", (c) => {
      scheduler.setFaults({ pauseDelivery: false });
      return c.json(state());
    })
    .all("/v2/*", (c) =>
      send(c, {
        status: 501,
        body: {
          error: `${c.req.method} ${c.req.path} is not implemented by the local QStash server (it serves publish and batch)`,
        },
      }),
    )
    .notFound((c) => send(c, { status: 404, body: { error: `no route ${c.req.method} ${c.req.path}` } }))
    .onError((error, c) =>
      error instanceof HTTPException
        ? error.getResponse()
        : send(c, { status: 400, body: { error: errorMessage(error) } }),
    );

  const server = await serveOnNode(app, { port: options.port });
  return {
    url: server.url,
    port: server.port,
    async close() {
      scheduler.close();
      await server.close();
    },
    pause: () => scheduler.setFaults({ pauseDelivery: true }),
    resume: () => scheduler.setFaults({ pauseDelivery: false }),
    setFaults: (faults) => scheduler.setFaults(faults),
    faults: () => scheduler.faults(),
    pending: () => scheduler.pending(),
    delivered: scheduler.counters,
    dlq: () => scheduler.dlq(),
    idle: (timeoutMs) => scheduler.idle(timeoutMs),
    scheduler,
  };
}

function send(c: Context, { status, body }: Reply) {
  return c.json(body as object, status as ContentfulStatusCode);
}

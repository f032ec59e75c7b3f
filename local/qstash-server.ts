/**
 * A local stand-in for QStash, compatible with `@upstash/qstash` 2.12's `Client` (read from its
 * `client.ts`, `messages.ts`, `dlq.ts`, `utils.ts`); deliveries verify with its `Receiver`.
 *
 * - `POST /v2/publish/<destination URL>` → 201 `{"messageId","url","deduplicated"?}` (headers: see
 *   `qstash-publish.ts`); `POST /v2/enqueue/<queue>/<destination>` is treated the same (no queue order);
 *   `POST /v2/batch` with `[{destination, headers, body}]` → `[{messageId, url, deduplicated?}]`;
 * - `GET /v2/messages/:id` (404 once delivered), `DELETE /v2/messages/:id` → `{"cancelled":1}`,
 *   `DELETE /v2/messages?messageIds=…` (no filter: all) → `{"cancelled":n}`;
 * - `GET /v2/dlq` → `{"messages":[…]}`, `DELETE /v2/dlq/:dlqId`, `DELETE /v2/dlq?dlqIds=…`; `GET /v2/keys`;
 * - `Authorization: Bearer <token>` on everything, 401 otherwise; errors are `{"error": "…"}`;
 * - a deduplication id seen before (server lifetime) is not enqueued again: `deduplicated: true`;
 * - test controls, also over HTTP for the dev stack and benchmarks: `GET /__local/state`,
 *   `POST /__local/pause`, `/__local/resume`, `/__local/faults` (JSON `{duplicateRate, delayJitterMs,
 *   pauseDelivery}`).
 * Delivery, retries, callbacks and the DLQ: see `qstash-scheduler.ts`.
 *
 * @example
 * const qstash = await startQStashServer({ port: 0, token, currentSigningKey, nextSigningKey, retryBaseMs: 50 });
 * await new Client({ token, baseUrl: qstash.url }).publishJSON({ url, body: { orderId } });
 * await qstash.idle(5_000);
 */
import { createServer, type IncomingMessage } from "node:http";
import { bearer, closeServer, errorMessage, listen, readBody, sendJson } from "./http-util";
import { LOOPBACK } from "./ports";
import type { DlqEntry } from "./qstash-message";
import { parsePublish } from "./qstash-publish";
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

type Reply = { status: number; body?: unknown };

const unsupportedFilter: Reply = { status: 400, body: { error: "only id filters are supported locally" } };

export async function startQStashServer(options: QStashServerOptions): Promise<QStashServer> {
  const maxRetries = options.maxRetries ?? 3;
  const scheduler = createScheduler({ ...options, signingKey: () => options.currentSigningKey });
  const deduplicated = new Map<string, string>();

  const publish = (destination: string, headers: Headers, body: Buffer): Reply => {
    const parsed = parsePublish({ destination, headers, body, maxRetries });
    if ("error" in parsed) return { status: 400, body: { error: parsed.error } };
    const { message, deduplicationId } = parsed;
    const earlier = deduplicationId === undefined ? undefined : deduplicated.get(deduplicationId);
    if (earlier) return { status: 201, body: { messageId: earlier, url: message.url, deduplicated: true } };
    if (deduplicationId !== undefined) deduplicated.set(deduplicationId, message.messageId);
    scheduler.enqueue(message);
    return { status: 201, body: { messageId: message.messageId, url: message.url } };
  };

  const state = () => ({
    paused: scheduler.faults().pauseDelivery,
    faults: scheduler.faults(),
    pending: scheduler.pending(),
    inFlight: scheduler.inFlight(),
    counters: scheduler.counters,
    dlq: scheduler.dlq().length,
  });

  const handle = async (req: IncomingMessage): Promise<Reply> => {
    if (bearer(req) !== options.token) return { status: 401, body: { error: "Unauthorized" } };
    const raw = req.url ?? "/";
    const url = new URL(raw, "http://local");
    const route = `${req.method} ${url.pathname}`;
    const body = await readBody(req);
    const publishPath = /^\/v2\/(publish|enqueue\/[^/]+)\/(.+)$/.exec(raw);
    if (req.method === "POST" && publishPath?.[2]) {
      const destination = /^https?%3A/i.test(publishPath[2])
        ? decodeURIComponent(publishPath[2])
        : publishPath[2];
      return publish(destination, new Headers(headersOf(req)), body);
    }
    if (route === "POST /v2/batch") {
      const entries: unknown = JSON.parse(body.toString("utf8") || "null");
      if (!Array.isArray(entries)) return { status: 400, body: { error: "expected an array of messages" } };
      const replies = entries.map(
        (e: { destination?: string; headers?: Record<string, string>; body?: string }) =>
          publish(e.destination ?? "", new Headers(e.headers ?? {}), Buffer.from(e.body ?? "", "utf8")),
      );
      const failed = replies.find((r) => r.status >= 400);
      return failed ?? { status: 201, body: replies.map((r) => r.body) };
    }
    const [, resource, id] = /^\/v2\/(messages|dlq)(?:\/([^/]+))?$/.exec(url.pathname) ?? [];
    if (resource === "messages" && id && req.method === "GET") {
      const view = scheduler.get(id);
      return view ? { status: 200, body: view } : { status: 404, body: { error: "message not found" } };
    }
    if (resource === "messages" && req.method === "DELETE") {
      const ids = id ? [id] : selected(url, "messageIds", scheduler.messageIds());
      if (!ids) return unsupportedFilter;
      const cancelled = ids.filter((m) => scheduler.cancel(m)).length;
      if (id && cancelled === 0) return { status: 404, body: { error: "message not found" } };
      return { status: 200, body: { cancelled } };
    }
    const dlqIds = () => scheduler.dlq().map((m) => m.dlqId);
    if (resource === "dlq" && !id && req.method === "GET") {
      const wanted = selected(url, "dlqIds", dlqIds());
      if (!wanted) return unsupportedFilter;
      return { status: 200, body: { messages: scheduler.dlq().filter((m) => wanted.includes(m.dlqId)) } };
    }
    if (resource === "dlq" && req.method === "DELETE") {
      const ids = id ? [id] : selected(url, "dlqIds", dlqIds());
      if (!ids) return unsupportedFilter;
      const deleted = ids.filter((d) => scheduler.deleteDlq(d)).length;
      if (id) return deleted ? { status: 200 } : { status: 404, body: { error: "dlq message not found" } };
      return { status: 200, body: { deleted } };
    }
    if (route === "GET /v2/keys") {
      return { status: 200, body: { current: options.currentSigningKey, next: options.nextSigningKey } };
    }
    if (route === "GET /__local/state") return { status: 200, body: state() };
    if (route === "POST /__local/pause") scheduler.setFaults({ pauseDelivery: true });
    else if (route === "POST /__local/resume") scheduler.setFaults({ pauseDelivery: false });
    else if (route === "POST /__local/faults")
      scheduler.setFaults(faultsFrom(JSON.parse(body.toString() || "{}")));
    else return { status: 404, body: { error: `no route ${route}` } };
    return { status: 200, body: state() };
  };

  const server = createServer((req, res) => {
    handle(req)
      .catch((error: unknown) => ({ status: 400, body: { error: errorMessage(error) } }))
      .then((reply) => sendJson(res, reply.status, reply.body));
  });
  const port = await listen(server, options.port);
  return {
    url: `http://${LOOPBACK}:${port}`,
    port,
    async close() {
      scheduler.close();
      await closeServer(server);
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

function headersOf(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}

/** The ids named in `?<param>=…` (repeated), `all` when none is named, null for other filters. */
function selected(url: URL, param: string, all: string[]): string[] | null {
  const keys = [...url.searchParams.keys()].filter((k) => k !== param && k !== "count" && k !== "cursor");
  if (keys.length > 0) return null;
  const named = url.searchParams.getAll(param);
  return named.length > 0 ? named : all;
}

function faultsFrom(input: Record<string, unknown>): Partial<Faults> {
  const faults: Partial<Faults> = {};
  if (typeof input.duplicateRate === "number")
    faults.duplicateRate = Math.min(1, Math.max(0, input.duplicateRate));
  if (typeof input.delayJitterMs === "number") faults.delayJitterMs = Math.max(0, input.delayJitterMs);
  if (typeof input.pauseDelivery === "boolean") faults.pauseDelivery = input.pauseDelivery;
  return faults;
}

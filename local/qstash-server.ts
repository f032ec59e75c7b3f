/**
 * A local stand-in for QStash, compatible with `@upstash/qstash` 2.12's `Client` (read from its
 * `client.ts`, `messages.ts`, `dlq.ts`, `utils.ts`); deliveries verify with its `Receiver`.
 *
 * - `POST /v2/publish/<destination URL>` → 201 `{"messageId","url","deduplicated"?}` (headers: see
 *   `qstash-publish.ts`); `POST /v2/batch` with `[{destination, headers, body}]` →
 *   `[{messageId, url, deduplicated?}]`, every entry checked before any is enqueued (one invalid entry:
 *   400 naming it, nothing published, so a retry cannot duplicate the others);
 * - not implemented, and refused with 400 naming the feature rather than ignored (the project uses
 *   neither): queues (`/v2/enqueue/<queue>/…`, a batch entry's `queue`) and flow control
 *   (`Upstash-Flow-Control-Key` / `-Value`);
 * - `GET /v2/messages/:id` (404 once delivered), `DELETE /v2/messages/:id` → `{"cancelled":1}`,
 *   `DELETE /v2/messages?messageIds=…|<filters>&count=n` (no filter: all) → `{"cancelled":n}`;
 * - `GET /v2/dlq?<filters>&count&cursor&order` → `{"messages":[…],"cursor"?}`, `DELETE /v2/dlq/:dlqId`,
 *   `DELETE /v2/dlq?dlqIds=…|<filters>` → `{"deleted":n}` (filters: `qstash-filters.ts`); `GET /v2/keys`;
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
import { selectBy } from "./qstash-filters";
import type { DlqEntry, QStashMessage } from "./qstash-message";
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
type BatchEntry = { destination?: string; headers?: Record<string, string>; body?: string; queue?: string };

const FLOW_CONTROL = ["upstash-flow-control-key", "upstash-flow-control-value"];
const unsupported = (feature: string): Reply => ({
  status: 400,
  body: { error: `${feature} is not supported by the local QStash server` },
});

export async function startQStashServer(options: QStashServerOptions): Promise<QStashServer> {
  const maxRetries = options.maxRetries ?? 3;
  const scheduler = createScheduler({ ...options, signingKey: () => options.currentSigningKey });
  const deduplicated = new Map<string, string>();

  /** A publish request checked, not yet enqueued: the message, or the 400 that refuses it. */
  const check = (destination: string, headers: Headers, body: Buffer) => {
    const flow = FLOW_CONTROL.find((h) => headers.has(h));
    if (flow) return unsupported(`flow control (${flow})`);
    const parsed = parsePublish({ destination, headers, body, maxRetries });
    return "error" in parsed ? { status: 400, body: { error: parsed.error } } : parsed;
  };

  const commit = ({ message, deduplicationId }: { message: QStashMessage; deduplicationId?: string }) => {
    const earlier = deduplicationId === undefined ? undefined : deduplicated.get(deduplicationId);
    if (earlier) return { status: 201, body: { messageId: earlier, url: message.url, deduplicated: true } };
    if (deduplicationId !== undefined) deduplicated.set(deduplicationId, message.messageId);
    scheduler.enqueue(message);
    return { status: 201, body: { messageId: message.messageId, url: message.url } };
  };

  const publish = (destination: string, headers: Headers, body: Buffer): Reply => {
    const checked = check(destination, headers, body);
    return "message" in checked ? commit(checked) : checked;
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
    if (/^\/v2\/enqueue\//.test(raw)) return unsupported("queues (/v2/enqueue)");
    const publishPath = /^\/v2\/(publish)\/(.+)$/.exec(raw);
    if (req.method === "POST" && publishPath?.[2]) {
      const destination = /^https?%3A/i.test(publishPath[2])
        ? decodeURIComponent(publishPath[2])
        : publishPath[2];
      return publish(destination, new Headers(headersOf(req)), body);
    }
    if (route === "POST /v2/batch") {
      const entries: unknown = JSON.parse(body.toString("utf8") || "null");
      if (!Array.isArray(entries)) return { status: 400, body: { error: "expected an array of messages" } };
      const checked = entries.map((e: BatchEntry, i) => {
        if (e.queue !== undefined) return { index: i, refused: unsupported("queues (batch entry queue)") };
        const one = check(
          e.destination ?? "",
          new Headers(e.headers ?? {}),
          Buffer.from(e.body ?? "", "utf8"),
        );
        return "message" in one ? one : { index: i, refused: one };
      });
      const refused = checked.find((c) => "refused" in c);
      if (refused && "refused" in refused) {
        const error = (refused.refused.body as { error: string }).error;
        return { status: 400, body: { error: `batch entry ${refused.index}: ${error}` } };
      }
      return { status: 201, body: checked.map((c) => ("message" in c ? commit(c).body : null)) };
    }
    const [, resource, id] = /^\/v2\/(messages|dlq)(?:\/([^/]+))?$/.exec(url.pathname) ?? [];
    if (resource === "messages" && id && req.method === "GET") {
      const view = scheduler.get(id);
      return view ? { status: 200, body: view } : { status: 404, body: { error: "message not found" } };
    }
    if (resource === "messages" && req.method === "DELETE") {
      const pending = scheduler
        .messageIds()
        .map((m) => scheduler.get(m))
        .filter((m): m is Record<string, unknown> => m !== undefined);
      const picked = selectBy(url, pending, { idParam: "messageIds", idOf: (m) => String(m.messageId) });
      if (!id && "error" in picked) return { status: 400, body: { error: picked.error } };
      const ids = id ? [id] : "items" in picked ? picked.items.map((m) => String(m.messageId)) : [];
      const cancelled = ids.filter((m) => scheduler.cancel(m)).length;
      if (id && cancelled === 0) return { status: 404, body: { error: "message not found" } };
      return { status: 200, body: { cancelled } };
    }
    const dlqIdOf = (m: DlqEntry) => m.dlqId;
    if (resource === "dlq" && !id && req.method === "GET") {
      const picked = selectBy(url, scheduler.dlq(), { idParam: "dlqIds", idOf: dlqIdOf, maxCount: 100 });
      if ("error" in picked) return { status: 400, body: { error: picked.error } };
      return {
        status: 200,
        body: { messages: picked.items, ...(picked.cursor ? { cursor: picked.cursor } : {}) },
      };
    }
    if (resource === "dlq" && req.method === "DELETE") {
      const picked = selectBy(url, scheduler.dlq(), { idParam: "dlqIds", idOf: dlqIdOf });
      if (!id && "error" in picked) return { status: 400, body: { error: picked.error } };
      const ids = id ? [id] : "items" in picked ? picked.items.map(dlqIdOf) : [];
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

function faultsFrom(input: Record<string, unknown>): Partial<Faults> {
  const faults: Partial<Faults> = {};
  if (typeof input.duplicateRate === "number")
    faults.duplicateRate = Math.min(1, Math.max(0, input.duplicateRate));
  if (typeof input.delayJitterMs === "number") faults.delayJitterMs = Math.max(0, input.delayJitterMs);
  if (typeof input.pauseDelivery === "boolean") faults.pauseDelivery = input.pauseDelivery;
  return faults;
}

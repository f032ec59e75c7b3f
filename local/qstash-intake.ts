/**
 * How the local QStash server takes messages in: a publish (`POST /v2/publish/<destination>`) or a batch
 * (`POST /v2/batch`) is checked whole before anything is enqueued (one invalid batch entry: 400 naming
 * it, nothing published, so a retry cannot duplicate the others), a deduplication id seen before (server
 * lifetime) is answered `deduplicated: true` instead of enqueued again, and what the project does not use
 * is refused by name rather than ignored: flow control (`Upstash-Flow-Control-Key` / `-Value`) and queues
 * (a batch entry's `queue`; `/v2/enqueue` is refused by the server).
 *
 * @example
 * const intake = createIntake(scheduler, 3);
 * const { status, body } = intake.publish(destination, request.headers, Buffer.from(await request.arrayBuffer()));
 */
import type { QStashMessage } from "./qstash-message";
import { parsePublish } from "./qstash-publish";
import type { Scheduler } from "./qstash-scheduler";

/** An answer: its HTTP status and JSON body. */
export type Reply = { status: number; body: unknown };
type BatchEntry = { destination?: string; headers?: Record<string, string>; body?: string; queue?: string };

const FLOW_CONTROL = ["upstash-flow-control-key", "upstash-flow-control-value"];

/** The 400 for a QStash feature the local server does not implement. */
export function unsupported(feature: string): Reply {
  return { status: 400, body: { error: `${feature} is not supported by the local QStash server` } };
}

export function createIntake(scheduler: Scheduler, maxRetries: number) {
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
    if (earlier) return { messageId: earlier, url: message.url, deduplicated: true };
    if (deduplicationId !== undefined) deduplicated.set(deduplicationId, message.messageId);
    scheduler.enqueue(message);
    return { messageId: message.messageId, url: message.url };
  };

  return {
    /** 201 `{messageId, url, deduplicated?}`, or the 400 that refuses it. */
    publish(destination: string, headers: Headers, body: Buffer): Reply {
      const checked = check(destination, headers, body);
      return "message" in checked ? { status: 201, body: commit(checked) } : checked;
    },

    /** 201 with one `{messageId, url, deduplicated?}` per entry, or a 400 and nothing enqueued. */
    batch(entries: unknown): Reply {
      if (!Array.isArray(entries)) return { status: 400, body: { error: "expected an array of messages" } };
      const checked = entries.map((e: BatchEntry, i) => {
        if (e.queue !== undefined) return { index: i, refused: unsupported("queues (batch entry queue)") };
        const headers = new Headers(e.headers ?? {});
        const one = check(e.destination ?? "", headers, Buffer.from(e.body ?? "", "utf8"));
        return "message" in one ? one : { index: i, refused: one };
      });
      const refused = checked.find((c) => "refused" in c);
      if (refused && "refused" in refused) {
        const error = (refused.refused.body as { error: string }).error;
        return { status: 400, body: { error: `batch entry ${refused.index}: ${error}` } };
      }
      return { status: 201, body: checked.map((c) => ("message" in c ? commit(c) : null)) };
    },
  };
}

import type { Client } from "@upstash/qstash";
import { traced, traceHeaders, tracingOn } from "../tracing";

/** What the engine asks of QStash: publishing jobs (src/orders/enqueue-order.ts). */
export type QStashPublisher = Pick<Client, "publishJSON" | "batchJSON">;

/** How long one publish (the SDK's own retries included) may take before it counts as failed. */
export const PUBLISH_TIMEOUT_MS = 5_000;

/** A publish that got no answer in time: QStash may still have taken it (deduplication ids make a resend safe). */
export class PublishTimeoutError extends Error {
  override name = "PublishTimeoutError";
}

/**
 * The client's publishes, each failing with {@link PublishTimeoutError} after `timeoutMs`: a QStash
 * that accepts the connection and never answers would otherwise hold the publish (and a server's
 * shutdown, which waits for pending publishes) forever. The SDK takes no abort signal, so the request
 * itself is left to end on its own; what it carried is safe either way: the order's outbox entry stays
 * until its write lands and the sweeper republishes it under the same deduplication id.
 *
 * @example
 * const qstash = withPublishTimeout(new Client({ token }));
 * await qstash.batchJSON(jobs); // rejects after 5 s without an answer
 */
export function withPublishTimeout(client: Client, timeoutMs = PUBLISH_TIMEOUT_MS): QStashPublisher {
  const bounded = <T>(call: () => Promise<T>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new PublishTimeoutError(`QStash did not answer a publish within ${timeoutMs} ms`)),
        timeoutMs,
      );
      call()
        .then(resolve, reject)
        .finally(() => clearTimeout(timer));
    });
  return {
    publishJSON: ((request: Parameters<Client["publishJSON"]>[0]) =>
      traced("qstash publish", { "messaging.system": "qstash", "messaging.operation.name": "publish" }, () =>
        bounded(() => client.publishJSON(withTraceContext(request))),
      )) as Client["publishJSON"],
    batchJSON: ((request: Parameters<Client["batchJSON"]>[0]) =>
      traced(
        "qstash batch",
        {
          "messaging.system": "qstash",
          "messaging.operation.name": "publish",
          "messaging.batch.message_count": request.length,
        },
        () => bounded(() => client.batchJSON(request.map(withTraceContext))),
      )) as Client["batchJSON"],
  };
}

/**
 * A job with the current trace context among the headers QStash forwards to the job route (`traceparent`,
 * sent as `Upstash-Forward-traceparent`), so the job's spans join the trace that published it.
 */
function withTraceContext<R extends { headers?: unknown }>(request: R): R {
  if (!tracingOn()) return request;
  const context = traceHeaders();
  if (!context.traceparent) return request;
  const headers = new Headers(request.headers as HeadersInit | undefined);
  for (const [name, value] of Object.entries(context)) headers.set(name, value);
  return { ...request, headers };
}

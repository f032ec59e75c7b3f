import type { WebhookDeliveryDeps } from "../services";
import { fetchTraceHeaders, traced } from "../tracing";
import { type SigningEndpoint, signingEndpoint } from "./endpoint-store";
import { deliveryRefusal } from "./endpoint-target";
import type { WebhookMessage } from "./event-types";
import type { DeliveryJob } from "./publish";
import { signatures } from "./secrets";

/** How long one POST to an endpoint may take before it counts as failed. */
const POST_TIMEOUT_MS = 10_000;

/** What a delivery job came to; `posted` counts the POSTs sent (the last one's answer aside). */
export type DeliveryOutcome =
  | { kind: "delivered"; delivered: number; posted: number }
  /** the endpoint was removed: its messages are dropped */
  | { kind: "gone" }
  /** the endpoint did not answer 2xx: `delivered` went through before, the rest did not */
  | { kind: "failed"; delivered: number; posted: number; status: number | null; msgId: string }
  /** the caller's deadline or count of POSTs came first: `delivered` went through, the rest was not tried */
  | { kind: "stopped"; delivered: number; posted: number };

/** How far a caller lets a job go: each POST's timeout, a deadline no POST outlives, a count of POSTs. */
export type DeliveryLimits = {
  postTimeoutMs?: number;
  deadline?: number;
  maxPosts?: number;
  /** the endpoint as its caller already looked it up (one lookup for all of an endpoint's jobs) */
  endpoint?: Promise<SigningEndpoint | null>;
};

/**
 * Runs a delivery job: POSTs each message to the endpoint in order, as Standard Webhooks asks
 * (`webhook-id`, `webhook-timestamp`, `webhook-signature` with a signature per valid secret, body
 * `{"type","timestamp","data"}`), signed now with the endpoint's current secrets. Stops at the first
 * answer that is not 2xx: the job is then delivered again by QStash with its backoff, every message
 * again (at least once: receivers drop a `webhook-id` seen before). A target that is not a public
 * address (src/webhooks/endpoint-target.ts, unless WEBHOOK_ALLOW_PRIVATE_TARGETS) is sent nothing: the
 * job fails as for an endpoint that is down. What an endpoint answers is never read, only its status.
 * With `limits` (an inline delivery, src/webhooks/deliver-inline.ts), it also stops, `stopped`, before
 * a POST past `maxPosts` or at `deadline` (a POST cut short by the deadline is not delivered).
 */
export async function deliverJob(
  d: WebhookDeliveryDeps,
  job: DeliveryJob,
  limits: DeliveryLimits = {},
): Promise<DeliveryOutcome> {
  const { postTimeoutMs = POST_TIMEOUT_MS, deadline = Number.POSITIVE_INFINITY } = limits;
  const maxPosts = limits.maxPosts ?? Number.POSITIVE_INFINITY;
  const endpoint = await (limits.endpoint ?? signingEndpoint(d.db, job.endpointId));
  if (!endpoint) return { kind: "gone" };
  const refusal = await deliveryRefusal(endpoint.url, {
    allowPrivate: d.config.WEBHOOK_ALLOW_PRIVATE_TARGETS,
    resolveHost: d.resolveHost,
  });
  // the endpoint's lookup and its name's resolution count against the deadline too
  if (!refusal && Date.now() >= deadline) return { kind: "stopped", delivered: 0, posted: 0 };
  if (refusal) {
    console.warn(`webhook endpoint ${endpoint.endpointId}: nothing sent, ${refusal}`);
    return { kind: "failed", delivered: 0, posted: 0, status: null, msgId: job.messages[0]?.msgId ?? "" };
  }
  let delivered = 0;
  for (const message of job.messages) {
    const left = deadline - Date.now();
    if (delivered >= maxPosts || left <= 0) return { kind: "stopped", delivered, posted: delivered };
    const timeoutMs = Math.min(postTimeoutMs, left);
    const answer = await post(endpoint.url, endpoint.secrets, message, timeoutMs);
    // cut short by the caller's deadline, not by the endpoint's own timeout: the caller's doing
    if (answer === "timeout" && timeoutMs < postTimeoutMs)
      return { kind: "stopped", delivered, posted: delivered + 1 };
    const status = answer === "timeout" ? null : answer;
    if (status === null || status < 200 || status > 299) {
      return { kind: "failed", delivered, posted: delivered + 1, status, msgId: message.msgId };
    }
    delivered++;
  }
  return { kind: "delivered", delivered, posted: delivered };
}

/** One signed POST; its status, `timeout` when its timeout ran out, null when it failed otherwise. */
async function post(
  url: string,
  secrets: string[],
  message: WebhookMessage,
  timeoutMs: number,
): Promise<number | "timeout" | null> {
  const body = JSON.stringify(message.payload);
  const at = new Date();
  try {
    const res = await traced(
      "webhook POST",
      { "http.request.method": "POST", "webhook.id": message.msgId },
      () =>
        fetch(url, {
          method: "POST",
          headers: {
            ...fetchTraceHeaders(),
            "content-type": "application/json",
            "webhook-id": message.msgId,
            "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
            "webhook-signature": signatures(secrets, message.msgId, at, body),
          },
          body,
          redirect: "manual",
          signal: AbortSignal.timeout(timeoutMs),
        }),
    );
    await res.body?.cancel().catch(() => {});
    return res.status;
  } catch (error) {
    return (error as Error | undefined)?.name === "TimeoutError" ? "timeout" : null;
  }
}

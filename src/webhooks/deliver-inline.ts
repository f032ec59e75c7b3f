import type { Deps } from "../services";
import { deliverJob } from "./deliver";
import type { OutboxEntry } from "./event-types";
import { deliveryJobs, forget, type OutboxJob, outboxJob, publishDeliveryJobs } from "./publish";

/** What delivering outbox entries from the process that wrote them needs. */
export type InlineDeliveryDeps = Pick<Deps, "db" | "config" | "qstash" | "resolveHost" | "metrics">;

/** How long one POST of an inline delivery may take before its endpoint's messages go through QStash. */
export const INLINE_POST_TIMEOUT_MS = 3_000;
/**
 * How long one endpoint's inline delivery may go on starting jobs: past it, its jobs not started go to
 * QStash (so a slow endpoint neither outlives a Worker's `waitUntil` nor races the sweep, which
 * republishes rows older than OUTBOX_GRACE_SECONDS).
 */
export const INLINE_BUDGET_MS = 4_000;
/** After an endpoint failed an inline delivery, how long this process hands its messages straight to QStash. */
export const INLINE_REST_MS = 30_000;

/** Endpoints that failed an inline delivery lately: until when this process skips them (endpoint id → ms). */
const resting = new Map<string, number>();

/**
 * Delivers outbox entries a statement just wrote from this process, without a QStash hop: per endpoint,
 * in order, each message POSTed and signed as a delivery job does (src/webhooks/deliver.ts), the
 * endpoints in parallel. What an endpoint does not take (an answer that is not 2xx, no answer within
 * {@link INLINE_POST_TIMEOUT_MS}, a target refused) is handed to QStash as delivery jobs from the first
 * message it did not take, as `publishOutbox` would, and that endpoint rests from inline delivery for
 * {@link INLINE_REST_MS}; so are the jobs not started within {@link INLINE_BUDGET_MS}. The rows are deleted once delivered or handed over; what neither happened
 * to (this process died, QStash failed) stays in the outbox for the sweep to publish (at least once: a
 * receiver drops a `webhook-id` it has seen). Never throws: meant to run in the background.
 *
 * @example
 * deps.defer(deliverInline(deps, webhooks));
 */
export async function deliverInline(deps: InlineDeliveryDeps, entries: OutboxEntry[]): Promise<void> {
  if (entries.length === 0) return;
  const byEndpoint = new Map<string, OutboxJob[]>();
  for (const job of deliveryJobs(entries)) {
    const list = byEndpoint.get(job.endpointId);
    if (list) list.push(job);
    else byEndpoint.set(job.endpointId, [job]);
  }
  const settled = await Promise.all([...byEndpoint].map(([id, jobs]) => deliverToEndpoint(deps, id, jobs)));
  const done = settled.flatMap((s) => s.done);
  const handOver = settled.flatMap((s) => s.left);
  try {
    if (handOver.length > 0) {
      try {
        await publishDeliveryJobs(deps, handOver);
      } catch (error) {
        console.warn(`webhooks: ${handOver.length} job(s) left in the outbox for the sweep:`, error);
        await forget(deps, done);
        return;
      }
    }
    await forget(deps, [...done, ...handOver.flatMap((j) => j.entryIds.map((id) => ({ id })))]);
  } catch (error) {
    // the rows stay: the sweep publishes them again (duplicates a receiver drops)
    console.warn("webhooks: delivered messages left in the outbox:", error);
  }
}

/**
 * One endpoint's jobs in order: delivered from here (or dropped, the endpoint removed), which is `done`,
 * or, from the first message it did not take, `left` to QStash.
 */
async function deliverToEndpoint(
  deps: InlineDeliveryDeps,
  endpointId: string,
  jobs: OutboxJob[],
): Promise<{ done: { id: number }[]; left: OutboxJob[] }> {
  const done: { id: number }[] = [];
  const started = Date.now();
  if ((resting.get(endpointId) ?? 0) > started) return { done, left: jobs };
  for (const [i, job] of jobs.entries()) {
    if (Date.now() - started > INLINE_BUDGET_MS) return { done, left: jobs.slice(i) };
    const outcome = await deliverJob(deps, job, INLINE_POST_TIMEOUT_MS).catch(() => null);
    if (outcome) deps.metrics?.webhookDelivery(outcome.kind);
    if (outcome?.kind === "gone") {
      // the endpoint was removed: its messages are dropped, as a delivery job drops them
      for (const later of jobs) done.push(...later.entryIds.map((id) => ({ id })));
      return { done, left: [] };
    }
    if (outcome?.kind === "delivered") {
      done.push(...job.entryIds.map((id) => ({ id })));
      continue;
    }
    resting.set(endpointId, Date.now() + INLINE_REST_MS);
    const taken = outcome?.delivered ?? 0;
    done.push(...job.entryIds.slice(0, taken).map((id) => ({ id })));
    const rest = job.messages.slice(taken).map((m, k) => ({
      id: job.entryIds[taken + k] as number,
      endpointId,
      msgId: m.msgId,
      payload: m.payload,
    }));
    return { done, left: [outboxJob(endpointId, rest), ...jobs.slice(i + 1)] };
  }
  return { done, left: [] };
}

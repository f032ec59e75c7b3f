import type { InlineDeliveryDeps } from "../services";
import { deliverJob } from "./deliver";
import { type SigningEndpoint, signingEndpoint } from "./endpoint-store";
import type { OutboxEntry } from "./event-types";
import { forget, jobsByEndpoint, type OutboxJob, outboxJob, publishDeliveryJobs } from "./publish";

/**
 * How long an inline delivery may go on: no POST starts after it, and none outlives it. Well inside
 * a Worker's `waitUntil` (30 s) and the sweep's grace (OUTBOX_GRACE_SECONDS, 10 s by default), after
 * which the sweep would publish the same rows again.
 */
export const INLINE_BUDGET_MS = 4_000;
/** How long one inline POST may take; an endpoint slower than this is served by QStash's jobs (10 s). */
export const INLINE_POST_TIMEOUT_MS = 3_000;
/**
 * Endpoints delivered to at once. A Worker keeps 6 connections per invocation; the delivery runs after
 * the job's own calls, so 4 leave room and no POST waits for a connection while its timeout runs.
 */
export const INLINE_ENDPOINTS_AT_ONCE = 4;
/**
 * Inline deliveries one process runs at once. Past it (a backlog of order-write jobs arriving at once),
 * a write's events go to QStash as delivery jobs, as without inline delivery: hundreds at once would
 * each get a sliver of the process, run out of their budget and be handed over anyway, and open as many
 * connections to the shop's endpoint. At 16, a steady rush on 2 cores already handed a third of its
 * writes over; at 64, none (bench/webhook-fanout.ts --steady).
 */
export const INLINE_DELIVERIES_AT_ONCE = 64;
let deliveriesNow = 0;

/** After an endpoint failed an inline POST, how long this process hands its messages straight to QStash. */
export const INLINE_REST_MS = 60_000;

/** Endpoints that failed an inline POST lately: until when this process skips them (endpoint id → ms). */
const resting = new Map<string, number>();

function rests(endpointId: string, now: number): boolean {
  const until = resting.get(endpointId);
  if (until === undefined) return false;
  if (until > now) return true;
  resting.delete(endpointId);
  return false;
}

/**
 * Delivers outbox entries a statement just wrote from this process, without a QStash hop: up to
 * {@link INLINE_ENDPOINTS_AT_ONCE} endpoints at once, each endpoint's messages in order, POSTed and
 * signed as a delivery job does (src/webhooks/deliver.ts), at most WEBHOOK_INLINE_POSTS POSTs in all
 * (a Worker's subrequests are counted) and none after {@link INLINE_BUDGET_MS}. What is not delivered
 * so (an answer that is not 2xx, no answer within {@link INLINE_POST_TIMEOUT_MS}, a target refused, the
 * budget or the count spent) is handed to QStash as delivery jobs from the first message not taken, as
 * `publishOutbox` does; an endpoint that failed rests from inline delivery for {@link INLINE_REST_MS}.
 * With {@link INLINE_DELIVERIES_AT_ONCE} already running in this process, everything is handed over.
 * Each endpoint's rows are deleted as soon as its messages are delivered or handed over; rows neither
 * happened to (this process died, QStash failed) stay in the outbox for the sweep (at least once: a
 * receiver drops a `webhook-id` it has seen). Never throws: meant to run in the background.
 *
 * @example
 * deps.defer(deliverInline(deps, webhooks));
 */
export async function deliverInline(deps: InlineDeliveryDeps, entries: OutboxEntry[]): Promise<void> {
  if (entries.length === 0) return;
  const byEndpoint = jobsByEndpoint(entries);
  if (deliveriesNow >= INLINE_DELIVERIES_AT_ONCE) {
    await settle(deps, [], [...byEndpoint.values()].flat());
    return;
  }
  deliveriesNow++;
  try {
    const budget = { until: Date.now() + INLINE_BUDGET_MS, posts: deps.config.WEBHOOK_INLINE_POSTS };
    const queue = [...byEndpoint];
    const worker = async () => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        const [endpointId, jobs] = next;
        const { done, left } = await deliverToEndpoint(deps, endpointId, jobs, budget);
        await settle(deps, done, left);
      }
    };
    await Promise.all(Array.from({ length: Math.min(INLINE_ENDPOINTS_AT_ONCE, queue.length) }, worker));
  } finally {
    deliveriesNow--;
  }
}

/** Hands `left` to QStash, then deletes the rows delivered or handed over; on a failure, leaves them to the sweep. */
async function settle(deps: InlineDeliveryDeps, done: number[], left: OutboxJob[]): Promise<void> {
  try {
    let handed: number[] = [];
    try {
      await publishDeliveryJobs(deps, left);
      handed = left.flatMap((j) => j.entryIds);
    } catch (error) {
      console.warn(`webhooks: ${left.length} delivery job(s) left in the outbox for the sweep:`, error);
    }
    await forget(
      deps,
      [...done, ...handed].map((id) => ({ id })),
    );
  } catch (error) {
    // the rows stay: the sweep publishes them again (duplicates a receiver drops)
    console.warn("webhooks: delivered messages left in the outbox:", error);
  }
}

/**
 * One endpoint's jobs in order: the rows delivered from here (or dropped, the endpoint removed), which
 * are `done`, and, from the first message not delivered, the jobs `left` to QStash.
 */
async function deliverToEndpoint(
  deps: InlineDeliveryDeps,
  endpointId: string,
  jobs: OutboxJob[],
  budget: { until: number; posts: number },
): Promise<{ done: number[]; left: OutboxJob[] }> {
  const done: number[] = [];
  if (rests(endpointId, Date.now())) return { done, left: jobs };
  let endpoint: Promise<SigningEndpoint | null> | undefined;
  for (const [i, job] of jobs.entries()) {
    // the POSTs this job may make, taken from the shared count before it runs, the unused given back
    const room = Math.min(budget.posts, job.messages.length);
    if (room === 0 || Date.now() >= budget.until) return { done, left: jobs.slice(i) };
    budget.posts -= room;
    // looked up once for all the endpoint's jobs, when the first of them runs
    endpoint ??= signingEndpoint(deps.db, endpointId);
    const outcome = await deliverJob(deps, job, {
      postTimeoutMs: INLINE_POST_TIMEOUT_MS,
      deadline: budget.until,
      maxPosts: room,
      endpoint,
    }).catch(() => null);
    // null: our side failed (the endpoint's lookup): nothing was sent, and the endpoint does not rest
    budget.posts += room - (outcome && outcome.kind !== "gone" ? outcome.posted : 0);
    if (!outcome) return { done, left: jobs.slice(i) };
    if (outcome.kind !== "stopped") deps.metrics?.webhookDelivery(outcome.kind);
    if (outcome.kind === "gone") {
      // the endpoint was removed: its messages are dropped, as a delivery job drops them
      for (const later of jobs.slice(i)) done.push(...later.entryIds);
      return { done, left: [] };
    }
    if (outcome.kind === "delivered") {
      done.push(...job.entryIds);
      continue;
    }
    // failed (the endpoint's doing: it rests) or stopped (the budget's: it does not)
    if (outcome.kind !== "stopped") resting.set(endpointId, Date.now() + INLINE_REST_MS);
    const taken = outcome.delivered;
    done.push(...job.entryIds.slice(0, taken));
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

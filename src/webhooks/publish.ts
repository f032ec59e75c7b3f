import { sql } from "drizzle-orm";
import { withDb } from "../db/client";
import { StoreUnavailableError } from "../errors";
import { jobUrl } from "../job-paths";
import type { WebhookDeps } from "../services";
import type { OutboxEntry, WebhookMessage } from "./event-types";

/** The most messages one delivery job carries (a larger batch is split). */
export const MESSAGES_PER_JOB = 50;

/** A delivery job's body: messages for one endpoint, POSTed one at a time, in order. */
export type DeliveryJob = { endpointId: string; messages: WebhookMessage[] };

/** A delivery job with what publishing it needs: its QStash deduplication id, its outbox rows' ids. */
export type OutboxJob = DeliveryJob & { dedupId: string; entryIds: number[] };

/** The delivery jobs for outbox entries: per endpoint, in order, at most {@link MESSAGES_PER_JOB} each. */
export function deliveryJobs(entries: OutboxEntry[]): OutboxJob[] {
  return [...jobsByEndpoint(entries).values()].flat();
}

/** {@link deliveryJobs}, each endpoint's jobs apart (in the order of its first entry). */
export function jobsByEndpoint(entries: OutboxEntry[]): Map<string, OutboxJob[]> {
  const byEndpoint = new Map<string, OutboxEntry[]>();
  for (const e of [...entries].sort((a, b) => a.id - b.id)) {
    const list = byEndpoint.get(e.endpointId);
    if (list) list.push(e);
    else byEndpoint.set(e.endpointId, [e]);
  }
  const jobs = new Map<string, OutboxJob[]>();
  for (const [endpointId, list] of byEndpoint) {
    const chunks: OutboxJob[] = [];
    for (let i = 0; i < list.length; i += MESSAGES_PER_JOB)
      chunks.push(outboxJob(endpointId, list.slice(i, i + MESSAGES_PER_JOB)));
    jobs.set(endpointId, chunks);
  }
  return jobs;
}

/**
 * One endpoint's entries (at most {@link MESSAGES_PER_JOB}, in order) as one job. Its deduplication id
 * names its rows (the first, the count, a hash of all their ids and message ids): QStash drops a second
 * publish under an id, so two jobs of different rows must never share one (an inline delivery's
 * leftovers and a sweep's chunk can start at the same row; row ids reused after a restore).
 */
export function outboxJob(endpointId: string, chunk: OutboxEntry[]): OutboxJob {
  const entryIds = chunk.map((e) => e.id);
  return {
    endpointId,
    messages: chunk.map(({ msgId, payload }) => ({ msgId, payload })),
    dedupId: `hook-${entryIds[0]}-${entryIds.length}-${fnv1a(chunk.map((e) => `${e.id}:${e.msgId}`).join(","))}`,
    entryIds,
  };
}

/** FNV-1a, 32 bits, as 8 hex digits. */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(16).padStart(8, "0");
}

/** Hands jobs to QStash in one batch call (retried with backoff, dead-lettered to /api/jobs/failed). */
export async function publishDeliveryJobs(
  { config, qstash }: WebhookDeps,
  jobs: (DeliveryJob & { dedupId: string })[],
): Promise<void> {
  if (jobs.length === 0) return;
  try {
    await qstash.batchJSON(
      jobs.map(({ dedupId, endpointId, messages }) => ({
        url: jobUrl(config.PUBLIC_URL, "webhookDelivery"),
        body: { endpointId, messages },
        deduplicationId: dedupId,
        retries: config.WEBHOOK_DELIVERY_RETRIES,
        failureCallback: jobUrl(config.PUBLIC_URL, "failed"),
      })),
    );
  } catch (error) {
    throw new StoreUnavailableError("qstash", error);
  }
}

/**
 * Publishes outbox entries a statement just wrote (one QStash batch call for all their endpoints), then
 * deletes them from the outbox. Nothing to publish (no endpoint subscribed): no call at all. A publish
 * that fails is logged, not thrown: the state change it reports is done, and the minute sweep publishes
 * what is left in the outbox ({@link publishLeftovers}).
 */
export async function publishOutbox(deps: WebhookDeps, entries: OutboxEntry[]): Promise<void> {
  if (entries.length === 0) return;
  try {
    await publishDeliveryJobs(deps, deliveryJobs(entries));
    await forget(deps, entries);
  } catch (error) {
    console.warn(`webhooks: ${entries.length} message(s) left in the outbox for the sweep:`, error);
  }
}

/** Deletes outbox rows whose messages were delivered or handed to QStash. */
export async function forget(deps: WebhookDeps, entries: { id: number }[]): Promise<void> {
  if (entries.length === 0) return;
  const ids = JSON.stringify(entries.map((e) => e.id));
  await withDb(() =>
    deps.db.execute(
      sql`delete from webhook_outbox where id in (select (jsonb_array_elements_text(${ids}::jsonb))::bigint)`,
    ),
  );
}

/**
 * The sweep's step: outbox entries older than `graceSeconds` (their publish failed, or the process
 * died before it) published again, oldest first, under the same deduplication ids. Returns how many.
 */
export async function publishLeftovers(
  deps: WebhookDeps,
  graceSeconds: number,
  limit = 500,
): Promise<number> {
  const result = await withDb(() =>
    deps.db.execute<Record<string, unknown>>(sql`
      select id, endpoint_id, msg_id, event from webhook_outbox
      where created_at < now() - make_interval(secs => ${graceSeconds}) order by id limit ${limit}`),
  );
  const entries: OutboxEntry[] = result.rows.map((r) => ({
    id: Number(r.id),
    endpointId: String(r.endpoint_id),
    msgId: String(r.msg_id),
    payload: (typeof r.event === "string" ? JSON.parse(r.event) : r.event) as OutboxEntry["payload"],
  }));
  if (entries.length === 0) return 0;
  await publishDeliveryJobs(deps, deliveryJobs(entries));
  await forget(deps, entries);
  return entries.length;
}

import { eq, sql } from "drizzle-orm";
import { type AuditActor, auditInsert } from "../db/audit-log";
import { withDb } from "../db/client";
import { deadLetters } from "../db/schema";
import { StoreUnavailableError } from "../errors";
import { JOBS_MOUNT, jobUrl } from "../job-paths";
import type { WebhookDeps } from "../services";

/** Retries of a replayed job that is not a webhook delivery (as the order pipeline's jobs). */
const JOB_RETRIES = 5;

/**
 * Hands a dead letter's job to QStash again (same route, same body, retried as at first), then removes
 * it from the dead letters: a new failure records it again. Only jobs of this engine (`PUBLIC_URL`'s
 * `/api/jobs/`) with a JSON body are replayed. With the operator (`actor`), the audit entry
 * `dead_letter.replay` is written by the statement that removes it (none when another replay removed it first).
 */
export async function replayDeadLetter(
  deps: WebhookDeps,
  id: number,
  actor?: AuditActor,
): Promise<"replayed" | "unknown" | "not_replayable"> {
  const { config, db, qstash } = deps;
  const [row] = await withDb(() => db.select().from(deadLetters).where(eq(deadLetters.id, id)).limit(1));
  if (!row) return "unknown";
  if (!row.url.startsWith(`${config.PUBLIC_URL}${JOBS_MOUNT}/`) || !row.body) return "not_replayable";
  let body: unknown;
  try {
    body = JSON.parse(row.body);
  } catch {
    return "not_replayable";
  }
  const webhook = row.url === jobUrl(config.PUBLIC_URL, "webhookDelivery");
  try {
    await qstash.publishJSON({
      url: row.url,
      body,
      retries: webhook ? config.WEBHOOK_DELIVERY_RETRIES : JOB_RETRIES,
      failureCallback: jobUrl(config.PUBLIC_URL, "failed"),
    });
  } catch (error) {
    throw new StoreUnavailableError("qstash", error);
  }
  if (!actor) {
    await withDb(() => db.delete(deadLetters).where(eq(deadLetters.id, id)));
    return "replayed";
  }
  const entry = { ...actor, action: "dead_letter.replay" as const, target: String(id) };
  const before = sql`jsonb_build_object('url', del.url, 'status', del.status, 'messageId', del.message_id)`;
  await withDb(() =>
    db.execute(sql`
      with del as (delete from ${deadLetters} where id = ${id} returning url, status, message_id)
      ${auditInsert(entry, { before, tail: sql`from del` })}`),
  );
  return "replayed";
}

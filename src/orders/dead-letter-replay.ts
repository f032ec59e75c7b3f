import { eq } from "drizzle-orm";
import { withDb } from "../db/client";
import { deadLetters } from "../db/schema";
import { StoreUnavailableError } from "../errors";
import type { WebhookDeps } from "../services";
import { WEBHOOK_DELIVERY_PATH } from "../webhooks/publish";

/** Retries of a replayed job that is not a webhook delivery (as the order pipeline's jobs). */
const JOB_RETRIES = 5;

/**
 * Hands a dead letter's job to QStash again (same route, same body, retried as at first), then removes
 * it from the dead letters: a new failure records it again. Only jobs of this engine (`PUBLIC_URL`'s
 * `/api/jobs/`) with a JSON body are replayed.
 */
export async function replayDeadLetter(
  deps: WebhookDeps,
  id: number,
): Promise<"replayed" | "unknown" | "not_replayable"> {
  const { config, db, qstash } = deps;
  const [row] = await withDb(() => db.select().from(deadLetters).where(eq(deadLetters.id, id)).limit(1));
  if (!row) return "unknown";
  if (!row.url.startsWith(`${config.PUBLIC_URL}/api/jobs/`) || !row.body) return "not_replayable";
  let body: unknown;
  try {
    body = JSON.parse(row.body);
  } catch {
    return "not_replayable";
  }
  const webhook = row.url === `${config.PUBLIC_URL}${WEBHOOK_DELIVERY_PATH}`;
  try {
    await qstash.publishJSON({
      url: row.url,
      body,
      retries: webhook ? config.WEBHOOK_DELIVERY_RETRIES : JOB_RETRIES,
      failureCallback: `${config.PUBLIC_URL}/api/jobs/failed`,
    });
  } catch (error) {
    throw new StoreUnavailableError("qstash", error);
  }
  await withDb(() => db.delete(deadLetters).where(eq(deadLetters.id, id)));
  return "replayed";
}

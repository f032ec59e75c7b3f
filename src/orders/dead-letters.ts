import { desc, sql } from "drizzle-orm";
import { type Db, withDb } from "../db/client";
import { deadLetters } from "../db/schema";

/** What QStash's failure callback sends (base64 fields decoded by the caller where useful). */
export type FailureCallback = {
  sourceMessageId?: string;
  url?: string;
  status?: number;
  body?: string;
  sourceBody?: string;
};

function decodeBase64(value: string | undefined): string | null {
  if (!value) return null;
  try {
    return new TextDecoder().decode(Uint8Array.from(atob(value), (ch) => ch.charCodeAt(0)));
  } catch {
    return value;
  }
}

/** A string field of the callback, bounded; anything else is absent. */
function text(value: unknown, max: number): string | null {
  return typeof value === "string" && value.length > 0 ? value.slice(0, max) : null;
}

/** Records a job QStash gave up on, once per message id, where the operator page shows it. */
export async function recordDeadLetter(db: Db, failure: FailureCallback, fallbackId: string): Promise<void> {
  await withDb(() =>
    db
      .insert(deadLetters)
      .values({
        messageId: text(failure.sourceMessageId, 200) ?? fallbackId,
        url: text(failure.url, 2000) ?? "unknown",
        status:
          Number.isInteger(failure.status) && Math.abs(Number(failure.status)) < 1000
            ? Number(failure.status)
            : null,
        body: decodeBase64(text(failure.sourceBody, 100_000) ?? undefined),
        responseBody: decodeBase64(text(failure.body, 100_000) ?? undefined),
      })
      .onConflictDoNothing(),
  );
}

export async function listDeadLetters(db: Db, limit: number) {
  return withDb(() => db.select().from(deadLetters).orderBy(desc(deadLetters.at), sql`id desc`).limit(limit));
}

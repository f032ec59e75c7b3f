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

/** Records a job QStash gave up on, once per message id, where the operator page shows it. */
export async function recordDeadLetter(db: Db, failure: FailureCallback, fallbackId: string): Promise<void> {
  await withDb(() =>
    db
      .insert(deadLetters)
      .values({
        messageId: failure.sourceMessageId ?? fallbackId,
        url: failure.url ?? "unknown",
        status: typeof failure.status === "number" ? failure.status : null,
        body: decodeBase64(failure.sourceBody),
        responseBody: decodeBase64(failure.body),
      })
      .onConflictDoNothing(),
  );
}

export async function listDeadLetters(db: Db, limit: number) {
  return withDb(() => db.select().from(deadLetters).orderBy(desc(deadLetters.at), sql`id desc`).limit(limit));
}

import { desc, eq, sql } from "drizzle-orm";
import { type Db, withDb } from "../db/client";
import { webhookEndpoints } from "../db/schema";
import type { WebhookEventType } from "./event-types";
import { newSecret, ROTATION_OVERLAP_MS } from "./secrets";

/** An endpoint as operators see it: never its secrets. */
export type EndpointView = { endpointId: string; url: string; events: WebhookEventType[]; createdAt: string };

/** An endpoint with the secrets that sign its deliveries now (the current one first). */
export type SigningEndpoint = { endpointId: string; url: string; events: string[]; secrets: string[] };

const ID_SHAPE = /^ep_[0-9a-f]{24}$/;

function newEndpointId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return `ep_${[...bytes].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

type Row = typeof webhookEndpoints.$inferSelect;

const view = (row: Row): EndpointView => ({
  endpointId: row.id,
  url: row.url,
  events: row.events as WebhookEventType[],
  createdAt: row.createdAt.toISOString(),
});

/** Registers an endpoint; its secret is answered here and never again. */
export async function createEndpoint(
  db: Db,
  input: { url: string; events: WebhookEventType[] },
): Promise<EndpointView & { secret: string }> {
  const secret = newSecret();
  const events = [...new Set(input.events)];
  const [row] = await withDb(() =>
    db.insert(webhookEndpoints).values({ id: newEndpointId(), url: input.url, events, secret }).returning(),
  );
  return { ...view(row as Row), secret };
}

/** Every endpoint, newest first. */
export async function listEndpoints(db: Db): Promise<EndpointView[]> {
  const rows = await withDb(() =>
    db.select().from(webhookEndpoints).orderBy(desc(webhookEndpoints.createdAt)),
  );
  return rows.map(view);
}

/** Removes an endpoint (its queued deliveries are dropped when they run); false when there was none. */
export async function deleteEndpoint(db: Db, endpointId: string): Promise<boolean> {
  if (!ID_SHAPE.test(endpointId)) return false;
  const rows = await withDb(() =>
    db
      .delete(webhookEndpoints)
      .where(eq(webhookEndpoints.id, endpointId))
      .returning({ id: webhookEndpoints.id }),
  );
  return rows.length > 0;
}

/** The endpoint and the secrets valid at the database's clock, or null when there is none. */
export async function signingEndpoint(db: Db, endpointId: string): Promise<SigningEndpoint | null> {
  if (!ID_SHAPE.test(endpointId)) return null;
  const rows = await withDb(() =>
    db
      .select({
        row: webhookEndpoints,
        previousValid: sql<boolean>`coalesce(${webhookEndpoints.previousSecretExpiresAt} > now(), false)`,
      })
      .from(webhookEndpoints)
      .where(eq(webhookEndpoints.id, endpointId)),
  );
  const found = rows[0];
  if (!found) return null;
  const { row } = found;
  const previousValid = found.previousValid === true || String(found.previousValid) === "true";
  const secrets = [row.secret, ...(previousValid && row.previousSecret ? [row.previousSecret] : [])];
  return { endpointId: row.id, url: row.url, events: row.events, secrets };
}

/**
 * Gives the endpoint a new secret; the one it had keeps signing for 24 hours (deliveries carry both
 * signatures meanwhile). Null when there is no such endpoint.
 */
export async function rotateSecret(db: Db, endpointId: string): Promise<string | null> {
  if (!ID_SHAPE.test(endpointId)) return null;
  const secret = newSecret();
  const rows = await withDb(() =>
    db
      .update(webhookEndpoints)
      .set({
        previousSecret: sql`${webhookEndpoints.secret}`,
        previousSecretExpiresAt: sql`now() + make_interval(secs => ${ROTATION_OVERLAP_MS / 1000})`,
        secret,
      })
      .where(eq(webhookEndpoints.id, endpointId))
      .returning({ id: webhookEndpoints.id }),
  );
  return rows.length > 0 ? secret : null;
}

import { and, desc, eq, sql } from "drizzle-orm";
import { type AuditActor, auditInsert } from "../db/audit-log";
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

/**
 * Registers an endpoint; its secret is answered here and never again. With the operator (`actor`), the
 * audit entry `webhook.create` (its URL and events, never the secret) is written in the same transaction.
 */
export async function createEndpoint(
  db: Db,
  input: { url: string; events: WebhookEventType[] },
  actor?: AuditActor,
): Promise<EndpointView & { secret: string }> {
  const secret = newSecret();
  const events = [...new Set(input.events)];
  const id = newEndpointId();
  const insert = db.insert(webhookEndpoints).values({ id, url: input.url, events, secret });
  if (!actor) {
    const [row] = await withDb(() => insert.returning());
    return { ...view(row as Row), secret };
  }
  const entry = {
    ...actor,
    action: "webhook.create" as const,
    target: id,
    after: { url: input.url, events },
  };
  await withDb(() => db.transaction([insert.getSQL(), auditInsert(entry)]));
  const [row] = await withDb(() => db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, id)));
  return { ...view(row as Row), secret };
}

/** Every endpoint, newest first. */
export async function listEndpoints(db: Db): Promise<EndpointView[]> {
  const rows = await withDb(() =>
    db.select().from(webhookEndpoints).orderBy(desc(webhookEndpoints.createdAt)),
  );
  return rows.map(view);
}

/**
 * Removes an endpoint (its queued deliveries are dropped when they run); false when there was none. With
 * the operator (`actor`), the audit entry `webhook.delete` is written by the same statement.
 */
export async function deleteEndpoint(db: Db, endpointId: string, actor?: AuditActor): Promise<boolean> {
  if (!ID_SHAPE.test(endpointId)) return false;
  if (actor) {
    const entry = { ...actor, action: "webhook.delete" as const, target: endpointId };
    const before = sql`jsonb_build_object('url', del.url, 'events', to_jsonb(del.events))`;
    const { rows } = await withDb(() =>
      db.execute(sql`
        with del as (delete from ${webhookEndpoints} where id = ${endpointId} returning id, url, events),
        au as (${auditInsert(entry, { before, tail: sql`from del` })})
        select id from del`),
    );
    return rows.length > 0;
  }
  const rows = await withDb(() =>
    db
      .delete(webhookEndpoints)
      .where(eq(webhookEndpoints.id, endpointId))
      .returning({ id: webhookEndpoints.id }),
  );
  return rows.length > 0;
}

/** A rotated-out secret still valid at the database's clock (a JSON element `r` of `retired_secrets`). */
const stillValid = sql`(r ->> 'expiresAt')::timestamptz > now()`;

/** The endpoint and the secrets valid at the database's clock, or null when there is none. */
export async function signingEndpoint(db: Db, endpointId: string): Promise<SigningEndpoint | null> {
  if (!ID_SHAPE.test(endpointId)) return null;
  const rows = await withDb(() =>
    db
      .select({
        row: webhookEndpoints,
        retired: sql<
          string[] | string
        >`coalesce((select jsonb_agg(r ->> 'secret' order by (r ->> 'expiresAt')::timestamptz desc)
          from jsonb_array_elements(${webhookEndpoints.retiredSecrets}) r where ${stillValid}), '[]'::jsonb)`,
      })
      .from(webhookEndpoints)
      .where(eq(webhookEndpoints.id, endpointId)),
  );
  const found = rows[0];
  if (!found) return null;
  const { row } = found;
  const retired = (typeof found.retired === "string" ? JSON.parse(found.retired) : found.retired) as string[];
  return { endpointId: row.id, url: row.url, events: row.events, secrets: [row.secret, ...retired] };
}

/**
 * How many rotated-out secrets may sign at once. A rotation beyond that within their 24 hours is refused
 * rather than dropping the oldest: every secret handed out keeps the 24 hours it was promised, and a
 * delivery carries at most 5 signatures (one HMAC each per message).
 */
export const MAX_RETIRED_SECRETS = 4;

/** What a rotation came to: the new secret, or why there is none. */
export type RotateOutcome =
  | { kind: "rotated"; secret: string }
  | { kind: "unknown_endpoint" }
  /** {@link MAX_RETIRED_SECRETS} still valid: the oldest lapses at `nextAt` (ISO-8601) */
  | { kind: "too_many_retired"; nextAt: string; retryAfterSeconds: number };

/**
 * Gives the endpoint a new secret; the one it had keeps signing for 24 hours, as does every secret rotated
 * out before it (deliveries carry a signature by each meanwhile). Lapsed secrets are forgotten here. One
 * statement, so concurrent rotations each retire the secret they replace. With the operator (`actor`),
 * the audit entry `webhook.rotate` (no secret in it) is written in the same transaction when it rotated.
 */
export async function rotateSecret(db: Db, endpointId: string, actor?: AuditActor): Promise<RotateOutcome> {
  if (!ID_SHAPE.test(endpointId)) return { kind: "unknown_endpoint" };
  const secret = newSecret();
  const kept = sql`coalesce((select jsonb_agg(r order by (r ->> 'expiresAt')::timestamptz)
    from jsonb_array_elements(${webhookEndpoints.retiredSecrets}) r where ${stillValid}), '[]'::jsonb)`;
  const expiresAt = sql`to_char((now() + make_interval(secs => ${ROTATION_OVERLAP_MS / 1000})) at time zone 'UTC',
    'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
  const update = db
    .update(webhookEndpoints)
    .set({
      retiredSecrets: sql`${kept} || jsonb_build_array(jsonb_build_object('secret', ${webhookEndpoints.secret}::text, 'expiresAt', ${expiresAt}))`,
      secret,
    })
    .where(
      and(eq(webhookEndpoints.id, endpointId), sql`jsonb_array_length(${kept}) < ${MAX_RETIRED_SECRETS}`),
    )
    .returning({ id: webhookEndpoints.id });
  const rotated = sql`where exists (select 1 from ${webhookEndpoints} where id = ${endpointId} and secret = ${secret})`;
  const entry = actor && { ...actor, action: "webhook.rotate" as const, target: endpointId };
  const [rows] = await withDb(() =>
    entry
      ? db.transaction([update.getSQL(), auditInsert(entry, { tail: rotated })])
      : update.then((r) => [r]),
  );
  if ((rows?.length ?? 0) > 0) return { kind: "rotated", secret };
  const [full] = await withDb(() =>
    db
      .select({
        nextAt: sql<
          string | null
        >`(select min(r ->> 'expiresAt') from jsonb_array_elements(${webhookEndpoints.retiredSecrets}) r where ${stillValid})`,
        seconds: sql<
          number | string | null
        >`(select extract(epoch from min((r ->> 'expiresAt')::timestamptz) - now())
          from jsonb_array_elements(${webhookEndpoints.retiredSecrets}) r where ${stillValid})`,
      })
      .from(webhookEndpoints)
      .where(eq(webhookEndpoints.id, endpointId)),
  );
  if (!full) return { kind: "unknown_endpoint" };
  // the oldest lapsed between the two statements: there is room now
  if (full.nextAt === null) return rotateSecret(db, endpointId, actor);
  const retryAfterSeconds = Math.max(1, Math.ceil(Number(full.seconds)));
  return { kind: "too_many_retired", nextAt: full.nextAt, retryAfterSeconds };
}

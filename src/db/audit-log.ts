import { type SQL, sql } from "drizzle-orm";
import { type Db, withDb } from "./client";

/** What an operator changed: each is one entry, written with the change. */
export type AuditAction =
  | "sale.create"
  | "sale.stock"
  | "sale.pause"
  | "sale.resume"
  | "sale.reconcile"
  | "order.payment"
  | "webhook.create"
  | "webhook.delete"
  | "webhook.rotate"
  | "dead_letter.replay";

/** Who asked for a change, as the operator route knows it: the operator's name and the request's id. */
export type AuditActor = { actor: string; requestId: string };

/** One entry to append: who, what, on which sale or thing, and the state before and after. */
export type AuditEntry = AuditActor & {
  action: AuditAction;
  saleId?: string | null;
  target?: string | null;
  before?: unknown;
  after?: unknown;
};

/** An entry as the audit route answers it (optional fields left out when empty). */
export type AuditView = {
  id: string;
  at: string;
  action: string;
  saleId?: string;
  target?: string;
  before?: unknown;
  after?: unknown;
  requestId: string;
  actor: string;
};

const jsonOf = (value: unknown): SQL =>
  value === undefined || value === null ? sql`null` : sql`${JSON.stringify(value)}::jsonb`;

/**
 * The INSERT that appends one entry, to run in the change's own transaction (one of its statements) or
 * as a CTE of its statement. `tail` ends the SELECT: `from upd` (one entry per row of `upd`, whose
 * columns `before` / `after` may then name) or `where …` (appended only when it holds). The chain's
 * columns are set by the table's trigger.
 *
 * @example
 * await db.transaction([update, auditInsert({ ...actor, action: "sale.pause", saleId, after: { paused } })]);
 */
export function auditInsert(entry: AuditEntry, parts: { before?: SQL; after?: SQL; tail?: SQL } = {}): SQL {
  return sql`insert into audit_log (actor, action, sale_id, target, before, after, request_id, prev_hash, hash)
    select ${entry.actor}, ${entry.action}, ${entry.saleId ?? null}, ${entry.target ?? null},
      ${parts.before ?? jsonOf(entry.before)}, ${parts.after ?? jsonOf(entry.after)}, ${entry.requestId}, '', ''
    ${parts.tail ?? sql``}`;
}

/** Appends one entry on its own, for a change made of many transactions (a reconciliation). */
export async function appendAudit(db: Db, entry: AuditEntry): Promise<void> {
  await withDb(() => db.execute(auditInsert(entry)));
}

/**
 * The newest entries first, of one sale or all, those older than the entry `before` (an id) when given.
 */
export async function readAudit(
  db: Db,
  query: { saleId?: string; limit: number; before?: number },
): Promise<AuditView[]> {
  const bySale = query.saleId === undefined ? sql`true` : sql`sale_id = ${query.saleId}`;
  const older = query.before === undefined ? sql`true` : sql`id < ${query.before}`;
  const { rows } = await withDb(() =>
    db.execute<Record<string, unknown>>(sql`
      select id::text as id, to_char(at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as at, actor, action,
             sale_id, target, before, after, request_id
      from audit_log where ${bySale} and ${older} order by audit_log.id desc limit ${query.limit}`),
  );
  return rows.map((r) => {
    const view: AuditView = {
      id: String(r.id),
      at: String(r.at),
      action: String(r.action),
      requestId: String(r.request_id),
      actor: String(r.actor),
    };
    if (r.sale_id !== null && r.sale_id !== undefined) view.saleId = String(r.sale_id);
    if (r.target !== null && r.target !== undefined) view.target = String(r.target);
    if (r.before !== null && r.before !== undefined) view.before = r.before;
    if (r.after !== null && r.after !== undefined) view.after = r.after;
    return view;
  });
}

/** What a walk of the chain found: every entry linked and hashed as written, or the first that is not. */
export type ChainCheck = { ok: true; entries: number } | { ok: false; entries: number; brokenAt: string };

/**
 * Walks the whole chain in id order, in one query: each entry's `prev_hash` must be the hash before it
 * and its `hash` must be the hash of its content now. Reports the first entry where either fails.
 */
export async function verifyAuditChain(db: Db): Promise<ChainCheck> {
  const { rows } = await withDb(() =>
    db.execute<{ entries: number | string; broken: string | null }>(sql`
      with walk as (
        select id, prev_hash = coalesce(lag(hash) over (order by id), '') and hash = audit_log_hash(prev_hash, id, at,
          actor, action, sale_id, target, before, after, request_id) as sound
        from audit_log
      )
      select count(*)::int as entries, (select min(id) from walk where not sound)::text as broken from walk`),
  );
  const row = rows[0];
  const entries = Number(row?.entries ?? 0);
  return row?.broken ? { ok: false, entries, brokenAt: row.broken } : { ok: true, entries };
}

import { eq, sql } from "drizzle-orm";
import { type AuditEntry, auditInsert } from "../db/audit-log";
import { type Db, withDb } from "../db/client";
import { sales, stockAdjustments } from "../db/schema";
import { DEFAULT_VARIANT, type SaleRecord, type VariantDefinition } from "./sale-record";

/** A variant as created: its definition and its initial stock. */
export type VariantInput = VariantDefinition & { stock: number };

type SaleRow = typeof sales.$inferSelect;

/**
 * Inserts a sale and its variants (without `variants`: one, `default`, with the sale's name, price and
 * stock); returns false if a sale with that product token already exists. With an audit entry, the
 * entry is appended in the same transaction, only when the sale was inserted.
 */
export async function insertSale(
  db: Db,
  sale: Omit<SaleRecord, "remaining" | "variants"> & { variants?: VariantInput[] },
  audit?: AuditEntry,
): Promise<boolean> {
  const insert = db
    .insert(sales)
    .values({
      id: sale.saleId,
      productId: sale.productId,
      name: sale.name,
      priceCents: sale.priceCents,
      initialStock: sale.initialStock,
      perUserLimit: sale.perUserLimit,
      startsAt: new Date(sale.startsAt),
      endsAt: new Date(sale.endsAt),
      paymentWindowSeconds: Math.round(sale.paymentWindowMs / 1000),
      productToken: sale.productToken,
      admission: sale.admission ?? "open",
      proofOfWork: sale.proofOfWork ?? false,
      description: sale.description ?? null,
      imageUrl: sale.imageUrl ?? null,
    })
    .onConflictDoNothing()
    .returning({ id: sales.id });
  const variants: VariantInput[] = sale.variants ?? [
    { variantId: DEFAULT_VARIANT, name: sale.name, priceCents: sale.priceCents, stock: sale.initialStock },
  ];
  const rows = JSON.stringify(
    variants.map((v, position) => ({
      variant_id: v.variantId,
      position,
      name: v.name,
      price_cents: v.priceCents,
      initial_stock: v.stock,
      per_user_limit: v.perUserLimit ?? null,
      description: v.description ?? null,
      image_url: v.imageUrl ?? null,
    })),
  );
  const inserted = sql`where exists (select 1 from ${sales} where id = ${sale.saleId})`;
  const variantInsert = sql`insert into sale_variants (sale_id, variant_id, position, name, price_cents,
      initial_stock, per_user_limit, description, image_url)
    select ${sale.saleId}, v.variant_id, v.position, v.name, v.price_cents, v.initial_stock, v.per_user_limit,
      v.description, v.image_url
    from jsonb_to_recordset(${rows}::jsonb) as v(variant_id text, position smallint, name text,
      price_cents int, initial_stock int, per_user_limit int, description text, image_url text)
    ${inserted} on conflict do nothing`;
  const statements = [insert.getSQL(), variantInsert];
  if (audit) statements.push(auditInsert(audit, { tail: inserted }));
  const [created] = await withDb(() => db.transaction(statements));
  return created?.length === 1;
}

export async function findSaleByToken(db: Db, token: string): Promise<SaleRow | null> {
  const rows = await withDb(() => db.select().from(sales).where(eq(sales.productToken, token)).limit(1));
  return rows[0] ?? null;
}

/**
 * Sets the pause flag and bumps its version under the row's lock, with an audit entry appended in the
 * same transaction when given; returns the new version (0 when there is no such sale), for Redis to
 * apply this change only if no later one got there first.
 */
export async function setSalePausedInDb(
  db: Db,
  saleId: string,
  paused: boolean,
  audit?: AuditEntry,
): Promise<number> {
  const update = sql`update sales set paused = ${paused}, pause_version = pause_version + 1
    where id = ${saleId} returning pause_version as version`;
  const [rows] = await withDb(() =>
    audit ? db.transaction([update, auditInsert(audit)]) : db.transaction([update]),
  );
  return Number(rows?.[0]?.version ?? 0);
}

export type RecordOutcome =
  | { kind: "recorded" }
  | ({ kind: "already_recorded" } & RecordedAdjustment)
  | { kind: "stale_epoch" };

/** An adjustment as Postgres recorded it: its delta, and its variant (null: recorded before variants). */
export type RecordedAdjustment = { delta: number; variantId: string | null };

/**
 * Records an operator adjustment once (by its id) and adds it to the sale's total and to its variant's
 * (`sale_variants.stock_adjustments`), only while the sale is still in `epoch`, the Redis generation the
 * adjustment was applied in. The sale row is locked first, so a rebuild (which moves the epoch on in the
 * same row) either reads the totals with this adjustment in them or makes this a `stale_epoch` no-op (the
 * rebuild replaces the Redis state that had it). Without a `variantId` (an entry from before variants)
 * the sale's first variant takes it: a sale of one has no other. With an audit entry, the entry is
 * appended in the same statement, only when this call recorded it.
 */
export async function recordAdjustment(
  db: Db,
  saleId: string,
  adjustment: { id: string; delta: number; epoch: number; variantId?: string },
  audit?: AuditEntry,
): Promise<RecordOutcome> {
  const audited = audit
    ? sql`, au as (${auditInsert(audit, { tail: sql`where exists (select 1 from upd)` })})`
    : sql``;
  const result = await withDb(() =>
    db.execute<{
      in_epoch: number;
      inserted: number;
      existing: number | null;
      existing_variant: string | null;
    }>(sql`
      with in_epoch as (
        select id from ${sales} where id = ${saleId} and epoch = ${adjustment.epoch} for update
      ), ins as (
        insert into ${stockAdjustments} (id, sale_id, delta, variant_id)
        select ${adjustment.id}, ${saleId}, ${adjustment.delta}, ${adjustment.variantId ?? null}::text from in_epoch
        on conflict (id) do nothing returning delta
      ), upd as (
        update ${sales} set stock_adjustments = stock_adjustments + (select delta from ins)
        where id = ${saleId} and epoch = ${adjustment.epoch} and exists (select 1 from ins) returning id
      ), updv as (
        update sale_variants set stock_adjustments = stock_adjustments + (select delta from ins)
        where sale_id = ${saleId} and exists (select 1 from upd) and variant_id = coalesce(${adjustment.variantId ?? null}::text,
          (select variant_id from sale_variants where sale_id = ${saleId} order by position limit 1))
        returning variant_id
      )${audited}
      select (select count(*) from in_epoch)::int as in_epoch, (select count(*) from upd)::int as inserted,
             (select delta from ${stockAdjustments} where id = ${adjustment.id}) as existing,
             (select variant_id from ${stockAdjustments} where id = ${adjustment.id}) as existing_variant`),
  );
  const row = result.rows[0];
  if (row?.existing !== null && row?.existing !== undefined)
    return { kind: "already_recorded", delta: Number(row.existing), variantId: row.existing_variant ?? null };
  if (Number(row?.inserted) === 1) return { kind: "recorded" };
  if (Number(row?.in_epoch) === 0) return { kind: "stale_epoch" };
  // recorded by a concurrent request after this statement's snapshot
  const recorded = await findAdjustment(db, adjustment.id);
  return { kind: "already_recorded", ...(recorded ?? { delta: adjustment.delta, variantId: null }) };
}

/** An adjustment Postgres has recorded (its delta and variant), or null. */
export async function findAdjustment(db: Db, adjustmentId: string): Promise<RecordedAdjustment | null> {
  const result = await withDb(() =>
    db.execute<{ delta: number; variant_id: string | null }>(
      sql`select delta, variant_id from ${stockAdjustments} where id = ${adjustmentId}`,
    ),
  );
  const row = result.rows[0];
  return row ? { delta: Number(row.delta), variantId: row.variant_id ?? null } : null;
}

/** An adjustment applied in Redis, as its ledger entry says (AdjustmentEntry, src/stock/ledger-entry.ts). */
export type AppliedAdjustment = { id: string; delta: number; epoch: number; variantId?: string };

/**
 * Records in Postgres the adjustments Redis applied but Postgres does not have (the request failed
 * between the two stores and was not retried); those of an older epoch are skipped, since the rebuild
 * that ended it replaced the Redis state that held them. Returns the ids recorded.
 */
export async function recordAppliedAdjustments(
  deps: { db: Db },
  saleId: string,
  applied: AppliedAdjustment[],
): Promise<string[]> {
  const recorded: string[] = [];
  for (const adjustment of applied) {
    const outcome = await recordAdjustment(deps.db, saleId, adjustment);
    if (outcome.kind === "recorded") recorded.push(adjustment.id);
  }
  return recorded;
}

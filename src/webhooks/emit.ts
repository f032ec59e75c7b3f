import { sql } from "drizzle-orm";
import { withDb } from "../db/client";
import type { WebhookDeps } from "../services";
import type { OutboxEntry, WebhookEventType } from "./event-types";
import { outboxColumn, outboxOf } from "./outbox-sql";

/** The sale events, each announcing the operator `Sale` it carries. */
export type SaleEventType = Extract<WebhookEventType, `sale.${string}`>;

/** A read of a sale to record: its place among the sale's reads, the status to record, the `Sale` it shows. */
export type SaleReading = {
  saleId: string;
  epoch: number;
  stamp: number;
  status: string;
  sale: Record<string, unknown>;
};

/** What recording a reading came to: `recorded` false when a newer reading was recorded first. */
export type RecordedReading = { recorded: boolean; entries: OutboxEntry[] };

/**
 * The event a change of the recorded status announces (`s` the new status, `p` the one before): paused
 * and resumed, live (opening, or units back after selling out), sold out, ended; none otherwise.
 */
const derivedType = sql`case
    when up.status = up.previous_status then null
    when up.status = 'paused' then 'sale.paused'
    when up.previous_status = 'paused' and up.status in ('live', 'sold_out') then 'sale.resumed'
    when up.status = 'live' then 'sale.live'
    when up.status = 'sold_out' then 'sale.sold_out'
    when up.status = 'ended' then 'sale.ended'
  end`;

/**
 * Records a reading of a sale in `webhook_sale_status` and writes the events it announces to the outbox,
 * in one statement. Only a reading newer than the one recorded is taken (`(epoch, stamp)` higher; never
 * away from `ended`, never back to `upcoming`): its status change announces {@link derivedType}, and
 * `type` (e.g. `sale.stock_adjusted`) is announced with it. Each event's `version` is taken from the
 * `webhook_versions` sequence after the sale's row is locked, so versions follow the readings' order,
 * which is the order of the states they show. With no endpoint subscribed nothing is written to the
 * outbox. A database failure is thrown.
 *
 * @example
 * const { recorded, entries } = await recordSaleReading(deps, reading, "sale.stock_adjusted");
 */
export async function recordSaleReading(
  deps: WebhookDeps,
  reading: SaleReading,
  type: SaleEventType | null = null,
): Promise<RecordedReading> {
  const { saleId, epoch, stamp, status } = reading;
  const result = await withDb(() =>
    deps.db.execute<Record<string, unknown>>(sql`
      with up as (
        insert into webhook_sale_status as w (sale_id, status, epoch, stamp)
        values (${saleId}, ${status}, ${epoch}, ${stamp})
        on conflict (sale_id) do update
          set status = excluded.status, previous_status = w.status, epoch = excluded.epoch, stamp = excluded.stamp
          where (w.epoch, w.stamp) < (excluded.epoch, excluded.stamp) and w.status <> 'ended'
            and (excluded.status <> 'upcoming' or w.status = 'upcoming')
        returning status, previous_status
      ),
      k as (
        select ${type}::text as type, 1 as ord from up where ${type}::text is not null
        union all
        select ${derivedType}, 2 from up
      ),
      v as (select type, nextval('webhook_versions') as version from (select * from k where type is not null order by ord) o),
      ob as (
        insert into webhook_outbox (endpoint_id, msg_id, event)
        select e.id, 'msg_' || ${saleId}::text || '_' || v.version,
          jsonb_build_object('type', v.type,
            'timestamp', to_char(now() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
            'data', ${JSON.stringify(reading.sale)}::jsonb || jsonb_build_object('version', v.version))
        from v join webhook_endpoints e on e.events @> jsonb_build_array(v.type)
        order by v.version, e.id
        returning id, endpoint_id, msg_id, event
      )
      select (select count(*) from up)::int as recorded, ${outboxColumn(sql`ob`)}`),
  );
  return { recorded: Number(result.rows[0]?.recorded) > 0, entries: outboxOf(result.rows) };
}

import { sql } from "drizzle-orm";
import { withDb } from "../db/client";
import type { WebhookDeps } from "../services";
import type { WebhookEventType } from "./event-types";
import { outboxColumn, outboxOf } from "./outbox-sql";
import { publishOutbox } from "./publish";

/** The sale events, each announcing the operator `Sale` it carries. */
export type SaleEventType = Extract<WebhookEventType, `sale.${string}`>;

/**
 * Announces a change of a sale to the endpoints subscribed to `type`: `data` is the operator `Sale`
 * plus `version` (from one Postgres sequence, so later changes carry higher versions), written to the
 * outbox and published at once. One statement; with no endpoint subscribed nothing is written or
 * published. Never throws for a failed publish (the sweep publishes leftovers); a database failure
 * is thrown, after the change it reports is done: callers run it after their change.
 *
 * @example
 * await emitSaleEvent(deps, "sale.paused", toSaleView(sale, now, "operator"));
 */
export async function emitSaleEvent(
  deps: WebhookDeps,
  type: SaleEventType,
  sale: { saleId: string } & Record<string, unknown>,
): Promise<void> {
  const result = await withDb(() =>
    deps.db.execute<Record<string, unknown>>(sql`
      with v as (select nextval('webhook_versions') as version),
      ob as (
        insert into webhook_outbox (endpoint_id, msg_id, event)
        select e.id, 'msg_' || ${sale.saleId}::text || '_' || v.version,
          jsonb_build_object('type', ${type}::text,
            'timestamp', to_char(now() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
            'data', ${JSON.stringify(sale)}::jsonb || jsonb_build_object('version', v.version))
        from webhook_endpoints e cross join v where e.events @> jsonb_build_array(${type}::text)
        order by e.id
        returning id, endpoint_id, msg_id, event
      )
      select ${outboxColumn(sql`ob`)} from v`),
  );
  await publishOutbox(deps, outboxOf(result.rows));
}

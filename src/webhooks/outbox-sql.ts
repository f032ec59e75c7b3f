import { type SQL, sql } from "drizzle-orm";
import { type OrderEventType, type OutboxEntry, orderEventSteps } from "./event-types";

/** A timestamptz as JavaScript's `toISOString()` writes it (UTC, milliseconds, `Z`). */
const iso = (value: SQL) => sql`to_char(${value} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * The statement part that writes order events to the webhook outbox, one row per event and subscribed
 * endpoint, from `source` (a CTE or table with the order columns `id`, `sale_id`, `quantity`, `status`,
 * `created_at`, `expires_at`, `paid_at`, `items`, `amount_cents`). Meant as a data-modifying CTE of the statement that changes
 * the orders, so the events are written with the change or not at all. No endpoint subscribed: no row,
 * nothing else to do. Its rows are read back with {@link outboxColumn}.
 *
 * @example
 * sql`with upd as (update orders ... returning *), ob as (${orderOutboxInsert(sql`upd`, ["order.paid"])})
 *     select *, ${outboxColumn(sql`ob`)} from upd`
 */
export function orderOutboxInsert(
  source: SQL,
  types: OrderEventType[],
  /** false when `source` has no payment columns (an order just written has no payment): none is read */
  opts: { payment?: boolean } = {},
): SQL {
  const steps = sql.join(
    types.map((type) => {
      const { status, version } = orderEventSteps[type];
      return sql`(${type}::text, ${status}::text, ${version}::int)`;
    }),
    sql`, `,
  );
  // each event's message is built once, for the events some endpoint takes (`offset 0` keeps the planner
  // from building it again for every endpoint's row), then copied to each endpoint that takes it
  return sql`insert into webhook_outbox (endpoint_id, msg_id, event)
    select e.id, m.msg_id, m.event
    from (
      select r.id, k.type, k.version, 'msg_' || r.id || '_' || k.version as msg_id,
        jsonb_build_object('type', k.type, 'timestamp', ${iso(sql`now()`)}, 'data', jsonb_strip_nulls(jsonb_build_object(
          'orderId', r.id, 'saleId', r.sale_id, 'quantity', r.quantity, 'status', coalesce(k.status, r.status),
          'createdAt', ${iso(sql`r.created_at`)}, 'expiresAt', ${iso(sql`r.expires_at`)},
          'paidAt', ${iso(sql`r.paid_at`)}, 'payment', ${opts.payment === false ? sql`null::jsonb` : paymentOf(sql`to_jsonb(r)`)},
          'items', r.items, 'amountCents', r.amount_cents, 'version', k.version))) as event
      from ${source} r cross join (values ${steps}) k(type, status, version)
      where exists (select 1 from webhook_endpoints w where w.events @> jsonb_build_array(k.type))
      offset 0
    ) m
    join webhook_endpoints e on e.events @> jsonb_build_array(m.type)
    order by m.id, m.version, e.id
    returning id, endpoint_id, msg_id, event`;
}

/** The order's `payment` (src/payments/) from a row's JSON, null when the source has none. */
function paymentOf(row: SQL): SQL {
  return sql`case when ${row} ->> 'payment_provider' is not null then jsonb_build_object(
    'provider', ${row} ->> 'payment_provider', 'status', ${row} ->> 'payment_status',
    'amountCents', (${row} ->> 'payment_amount_cents')::int, 'currency', ${row} ->> 'payment_currency') end`;
}

/**
 * A result column holding the outbox rows `cte` wrote, on the statement's first result row only (null
 * on the others), read by {@link outboxOf}.
 */
export function outboxColumn(cte: SQL): SQL {
  // json, not jsonb: the rows go out as text once, instead of being built again as one jsonb value first
  return sql`case when row_number() over () = 1 then (
      select coalesce(json_agg(json_build_object(
        'id', o.id, 'endpointId', o.endpoint_id, 'msgId', o.msg_id, 'payload', o.event) order by o.id), '[]'::json)
      from ${cte} o) end as webhook_outbox`;
}

/** The outbox rows a statement's {@link outboxColumn} carried (any driver: parsed JSON or its text). */
export function outboxOf(rows: Record<string, unknown>[]): OutboxEntry[] {
  const entries: OutboxEntry[] = [];
  for (const row of rows) {
    const value = row.webhook_outbox;
    if (value === null || value === undefined) continue;
    const parsed = (typeof value === "string" ? JSON.parse(value) : value) as OutboxEntry[];
    for (const e of parsed) entries.push({ ...e, id: Number(e.id) });
  }
  return entries;
}

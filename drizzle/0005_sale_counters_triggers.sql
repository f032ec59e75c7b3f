-- The counters of sale_counters, kept by statement-level triggers on orders (see src/db/schema.ts), and
-- filled for the orders already written. Each statement adds the difference its own changed rows make
-- (new rows counted +1, old rows -1) to its session's shard of each sale it touched, sales in order;
-- a statement that changed no row (a duplicate delivery, a transition someone else won) changes nothing.
CREATE OR REPLACE FUNCTION sale_counters_orders_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO sale_counters AS c (sale_id, shard, orders, awaiting_payment, paid, expired, cancelled, live_units, unrestored_units)
  SELECT d.sale_id, (pg_backend_pid() % 8)::smallint, sum(d.s)::int,
         coalesce(sum(d.s) FILTER (WHERE d.status = 'awaiting_payment'), 0)::int,
         coalesce(sum(d.s) FILTER (WHERE d.status = 'paid'), 0)::int,
         coalesce(sum(d.s) FILTER (WHERE d.status = 'expired'), 0)::int,
         coalesce(sum(d.s) FILTER (WHERE d.status = 'cancelled'), 0)::int,
         coalesce(sum(d.s * d.quantity) FILTER (WHERE d.status IN ('awaiting_payment', 'paid')), 0)::int,
         coalesce(sum(d.s * d.quantity) FILTER (WHERE d.status IN ('expired', 'cancelled') AND d.restored_at IS NULL), 0)::int
  FROM (
    SELECT 1 AS s, sale_id, status, quantity, restored_at FROM new_rows
    UNION ALL
    SELECT -1 AS s, sale_id, status, quantity, restored_at FROM old_rows
  ) d
  GROUP BY d.sale_id
  HAVING sum(d.s) <> 0
      OR coalesce(sum(d.s) FILTER (WHERE d.status = 'awaiting_payment'), 0) <> 0
      OR coalesce(sum(d.s) FILTER (WHERE d.status = 'paid'), 0) <> 0
      OR coalesce(sum(d.s) FILTER (WHERE d.status = 'expired'), 0) <> 0
      OR coalesce(sum(d.s) FILTER (WHERE d.status = 'cancelled'), 0) <> 0
      OR coalesce(sum(d.s * d.quantity) FILTER (WHERE d.status IN ('awaiting_payment', 'paid')), 0) <> 0
      OR coalesce(sum(d.s * d.quantity) FILTER (WHERE d.status IN ('expired', 'cancelled') AND d.restored_at IS NULL), 0) <> 0
  ORDER BY d.sale_id
  ON CONFLICT (sale_id, shard) DO UPDATE SET
    orders = c.orders + excluded.orders,
    awaiting_payment = c.awaiting_payment + excluded.awaiting_payment,
    paid = c.paid + excluded.paid,
    expired = c.expired + excluded.expired,
    cancelled = c.cancelled + excluded.cancelled,
    live_units = c.live_units + excluded.live_units,
    unrestored_units = c.unrestored_units + excluded.unrestored_units;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION sale_counters_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  TRUNCATE sale_counters;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION sale_counters_orders_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO sale_counters AS c (sale_id, shard, orders, awaiting_payment, paid, expired, cancelled, live_units, unrestored_units)
  SELECT sale_id, (pg_backend_pid() % 8)::smallint, count(*)::int,
         count(*) FILTER (WHERE status = 'awaiting_payment')::int,
         count(*) FILTER (WHERE status = 'paid')::int,
         count(*) FILTER (WHERE status = 'expired')::int,
         count(*) FILTER (WHERE status = 'cancelled')::int,
         coalesce(sum(quantity) FILTER (WHERE status IN ('awaiting_payment', 'paid')), 0)::int,
         coalesce(sum(quantity) FILTER (WHERE status IN ('expired', 'cancelled') AND restored_at IS NULL), 0)::int
  FROM new_rows GROUP BY sale_id ORDER BY sale_id
  ON CONFLICT (sale_id, shard) DO UPDATE SET
    orders = c.orders + excluded.orders,
    awaiting_payment = c.awaiting_payment + excluded.awaiting_payment,
    paid = c.paid + excluded.paid,
    expired = c.expired + excluded.expired,
    cancelled = c.cancelled + excluded.cancelled,
    live_units = c.live_units + excluded.live_units,
    unrestored_units = c.unrestored_units + excluded.unrestored_units;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION sale_counters_orders_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO sale_counters AS c (sale_id, shard, orders, awaiting_payment, paid, expired, cancelled, live_units, unrestored_units)
  SELECT sale_id, (pg_backend_pid() % 8)::smallint, -count(*)::int,
         -count(*) FILTER (WHERE status = 'awaiting_payment')::int,
         -count(*) FILTER (WHERE status = 'paid')::int,
         -count(*) FILTER (WHERE status = 'expired')::int,
         -count(*) FILTER (WHERE status = 'cancelled')::int,
         -coalesce(sum(quantity) FILTER (WHERE status IN ('awaiting_payment', 'paid')), 0)::int,
         -coalesce(sum(quantity) FILTER (WHERE status IN ('expired', 'cancelled') AND restored_at IS NULL), 0)::int
  FROM old_rows GROUP BY sale_id ORDER BY sale_id
  ON CONFLICT (sale_id, shard) DO UPDATE SET
    orders = c.orders + excluded.orders,
    awaiting_payment = c.awaiting_payment + excluded.awaiting_payment,
    paid = c.paid + excluded.paid,
    expired = c.expired + excluded.expired,
    cancelled = c.cancelled + excluded.cancelled,
    live_units = c.live_units + excluded.live_units,
    unrestored_units = c.unrestored_units + excluded.unrestored_units;
  RETURN NULL;
END
$$;
--> statement-breakpoint
DROP TRIGGER IF EXISTS sale_counters_orders_inserted ON orders;
--> statement-breakpoint
DROP TRIGGER IF EXISTS sale_counters_orders_updated ON orders;
--> statement-breakpoint
DROP TRIGGER IF EXISTS sale_counters_orders_deleted ON orders;
--> statement-breakpoint
DROP TRIGGER IF EXISTS sale_counters_orders_truncated ON orders;
--> statement-breakpoint
CREATE TRIGGER sale_counters_orders_inserted AFTER INSERT ON orders REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION sale_counters_orders_inserted();
--> statement-breakpoint
CREATE TRIGGER sale_counters_orders_updated AFTER UPDATE ON orders REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION sale_counters_orders_updated();
--> statement-breakpoint
CREATE TRIGGER sale_counters_orders_deleted AFTER DELETE ON orders REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION sale_counters_orders_deleted();
--> statement-breakpoint
CREATE TRIGGER sale_counters_orders_truncated AFTER TRUNCATE ON orders FOR EACH STATEMENT EXECUTE FUNCTION sale_counters_truncated();
--> statement-breakpoint
INSERT INTO sale_counters (sale_id, shard, orders, awaiting_payment, paid, expired, cancelled, live_units, unrestored_units)
SELECT sale_id, 0, count(*)::int,
       count(*) FILTER (WHERE status = 'awaiting_payment')::int,
       count(*) FILTER (WHERE status = 'paid')::int,
       count(*) FILTER (WHERE status = 'expired')::int,
       count(*) FILTER (WHERE status = 'cancelled')::int,
       coalesce(sum(quantity) FILTER (WHERE status IN ('awaiting_payment', 'paid')), 0)::int,
       coalesce(sum(quantity) FILTER (WHERE status IN ('expired', 'cancelled') AND restored_at IS NULL), 0)::int
FROM orders GROUP BY sale_id
ON CONFLICT (sale_id, shard) DO NOTHING;

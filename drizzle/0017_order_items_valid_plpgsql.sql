-- The check on an order's lines (0013's order_items_valid), the same rules in PL/pgSQL: the SQL version
-- cannot be inlined (it holds subqueries), so every row written ran it as a query of its own, two scans of
-- the lines each time (about 20 µs of Postgres CPU per one-line order; this one about 3.5). Its answers are
-- the SQL version's for any input (test/integration/orders/order-lines-check.test.ts): false when the lines
-- are not an array of 1 to 50 objects, each a text variant id, a whole quantity of at least 1 and a whole
-- price of at least 0, each variant at most once; else whether the quantities add up to the order's
-- quantity and quantity x price to its amount (null when either is null, which a CHECK lets through).
CREATE OR REPLACE FUNCTION order_items_valid(items jsonb, quantity integer, amount bigint) RETURNS boolean
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  e jsonb;
  q numeric;
  p numeric;
  total_q numeric := 0;
  total_a numeric := 0;
  n integer;
BEGIN
  IF items IS NULL OR jsonb_typeof(items) <> 'array' THEN
    RETURN false;
  END IF;
  n := jsonb_array_length(items);
  IF n NOT BETWEEN 1 AND 50 THEN
    RETURN false;
  END IF;
  FOR i IN 0 .. n - 1 LOOP
    e := items -> i;
    IF jsonb_typeof(e) <> 'object' OR jsonb_typeof(e -> 'variantId') IS DISTINCT FROM 'string'
       OR jsonb_typeof(e -> 'quantity') IS DISTINCT FROM 'number'
       OR jsonb_typeof(e -> 'priceCents') IS DISTINCT FROM 'number' THEN
      RETURN false;
    END IF;
  END LOOP;
  FOR i IN 0 .. n - 1 LOOP
    e := items -> i;
    q := (e ->> 'quantity')::numeric;
    p := (e ->> 'priceCents')::numeric;
    IF NOT (q >= 1 AND q % 1 = 0 AND p >= 0 AND p % 1 = 0) THEN
      RETURN false;
    END IF;
    FOR j IN 0 .. i - 1 LOOP
      IF items -> j ->> 'variantId' = e ->> 'variantId' THEN
        RETURN false;
      END IF;
    END LOOP;
    total_q := total_q + q;
    total_a := total_a + q * p;
  END LOOP;
  RETURN total_q = quantity AND total_a = amount;
END
$$;

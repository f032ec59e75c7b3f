-- Variants and carts: a sale holds 1 to 50 variants, an order holds its lines.
CREATE TABLE "sale_variants" (
	"sale_id" text NOT NULL,
	"variant_id" text NOT NULL,
	"position" smallint NOT NULL,
	"name" text NOT NULL,
	"price_cents" integer NOT NULL,
	"initial_stock" integer NOT NULL,
	"stock_adjustments" integer DEFAULT 0 NOT NULL,
	"per_user_limit" integer,
	"description" text,
	"image_url" text,
	CONSTRAINT "sale_variants_sale_id_variant_id_pk" PRIMARY KEY("sale_id","variant_id"),
	CONSTRAINT "sale_variants_id_check" CHECK ("sale_variants"."variant_id" ~ '^[A-Za-z0-9_-]{1,32}$'),
	CONSTRAINT "sale_variants_price_cents_check" CHECK ("sale_variants"."price_cents" >= 0),
	CONSTRAINT "sale_variants_initial_stock_check" CHECK ("sale_variants"."initial_stock" >= 0),
	CONSTRAINT "sale_variants_stock_check" CHECK ("sale_variants"."initial_stock" + "sale_variants"."stock_adjustments" >= 0),
	CONSTRAINT "sale_variants_per_user_limit_check" CHECK ("sale_variants"."per_user_limit" is null or "sale_variants"."per_user_limit" >= 1)
);
--> statement-breakpoint
ALTER TABLE "sale_variants" ADD CONSTRAINT "sale_variants_sale_id_sales_id_fk" FOREIGN KEY ("sale_id") REFERENCES "public"."sales"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sales" ADD COLUMN "description" text;--> statement-breakpoint
ALTER TABLE "sales" ADD COLUMN "image_url" text;--> statement-breakpoint
-- every sale made before variants is a sale of one, "default"
INSERT INTO "sale_variants" ("sale_id", "variant_id", "position", "name", "price_cents", "initial_stock", "stock_adjustments")
SELECT "id", 'default', 0, "name", "price_cents", "initial_stock", "stock_adjustments" FROM "sales";--> statement-breakpoint
-- An order's lines are valid when: an array of 1 to 50 objects, each a variant id (text), a whole
-- quantity of at least 1 and a price of at least 0; each variant at most once; the quantities add up
-- to the order's quantity and quantity x price to its amount.
CREATE FUNCTION order_items_valid(items jsonb, quantity integer, amount bigint) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE
    WHEN items IS NULL OR jsonb_typeof(items) <> 'array' THEN false
    WHEN jsonb_array_length(items) NOT BETWEEN 1 AND 50 THEN false
    WHEN EXISTS (
      SELECT 1 FROM jsonb_array_elements(items) e
      WHERE jsonb_typeof(e) <> 'object'
         OR jsonb_typeof(e->'variantId') IS DISTINCT FROM 'string'
         OR jsonb_typeof(e->'quantity') IS DISTINCT FROM 'number'
         OR jsonb_typeof(e->'priceCents') IS DISTINCT FROM 'number'
    ) THEN false
    ELSE (
      SELECT bool_and((e->>'quantity')::numeric >= 1 AND (e->>'quantity')::numeric % 1 = 0
                      AND (e->>'priceCents')::numeric >= 0 AND (e->>'priceCents')::numeric % 1 = 0)
         AND count(DISTINCT e->>'variantId') = count(*)
         AND sum((e->>'quantity')::numeric) = quantity
         AND sum((e->>'quantity')::numeric * (e->>'priceCents')::numeric) = amount
      FROM jsonb_array_elements(items) e
    )
  END
$$;--> statement-breakpoint
-- An order written without lines (a one-variant sale's) gets its one line from the sale's only variant.
CREATE FUNCTION orders_default_items() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v record;
  n integer;
BEGIN
  IF NEW.items IS NULL THEN
    SELECT count(*) INTO n FROM sale_variants WHERE sale_id = NEW.sale_id;
    IF n = 1 THEN
      SELECT variant_id, name, price_cents INTO v FROM sale_variants WHERE sale_id = NEW.sale_id;
      NEW.items := jsonb_build_array(jsonb_build_object(
        'variantId', v.variant_id, 'name', v.name, 'quantity', NEW.quantity, 'priceCents', v.price_cents));
      IF NEW.amount_cents IS NULL THEN
        NEW.amount_cents := NEW.quantity::bigint * v.price_cents;
      END IF;
    END IF;
  END IF;
  RETURN NEW;
END
$$;--> statement-breakpoint
ALTER TABLE "orders" ADD COLUMN "items" jsonb;--> statement-breakpoint
ALTER TABLE "orders" ADD COLUMN "amount_cents" bigint;--> statement-breakpoint
CREATE TRIGGER orders_default_items BEFORE INSERT ON "orders"
FOR EACH ROW WHEN (NEW.items IS NULL) EXECUTE FUNCTION orders_default_items();--> statement-breakpoint
UPDATE "orders" o SET
  "items" = jsonb_build_array(jsonb_build_object('variantId', 'default', 'name', s."name", 'quantity', o."quantity", 'priceCents', s."price_cents")),
  "amount_cents" = o."quantity"::bigint * s."price_cents"
FROM "sales" s WHERE s."id" = o."sale_id";--> statement-breakpoint
ALTER TABLE "orders" ALTER COLUMN "items" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "orders" ALTER COLUMN "amount_cents" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "orders" ADD CONSTRAINT "orders_items_check" CHECK (order_items_valid("orders"."items", "orders"."quantity", "orders"."amount_cents"));

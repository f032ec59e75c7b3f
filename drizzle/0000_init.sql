CREATE TABLE "dead_letters" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"message_id" text NOT NULL,
	"url" text NOT NULL,
	"status" integer,
	"body" text,
	"response_body" text,
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "dead_letters_message_id_unique" UNIQUE("message_id")
);
--> statement-breakpoint
CREATE TABLE "holdings" (
	"sale_id" text NOT NULL,
	"user_id" text NOT NULL,
	"units" integer NOT NULL,
	"per_user_limit" integer NOT NULL,
	CONSTRAINT "holdings_sale_id_user_id_pk" PRIMARY KEY("sale_id","user_id"),
	CONSTRAINT "holdings_units_check" CHECK ("holdings"."units" >= 0 and "holdings"."units" <= "holdings"."per_user_limit")
);
--> statement-breakpoint
CREATE TABLE "order_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"order_id" text NOT NULL,
	"sale_id" text NOT NULL,
	"type" text NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	"detail" jsonb,
	CONSTRAINT "order_events_type_check" CHECK ("order_events"."type" in ('written', 'paid', 'expired', 'cancelled', 'restored'))
);
--> statement-breakpoint
CREATE TABLE "orders" (
	"id" text PRIMARY KEY NOT NULL,
	"sale_id" text NOT NULL,
	"user_id" text NOT NULL,
	"quantity" integer NOT NULL,
	"status" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"written_at" timestamp with time zone DEFAULT now() NOT NULL,
	"paid_at" timestamp with time zone,
	"payment_ref" text,
	"expired_at" timestamp with time zone,
	"cancelled_at" timestamp with time zone,
	"restored_at" timestamp with time zone,
	CONSTRAINT "orders_quantity_check" CHECK ("orders"."quantity" >= 1),
	CONSTRAINT "orders_status_check" CHECK ("orders"."status" in ('awaiting_payment', 'paid', 'expired', 'cancelled')),
	CONSTRAINT "orders_paid_check" CHECK (("orders"."status" = 'paid') = ("orders"."paid_at" is not null)),
	CONSTRAINT "orders_restored_check" CHECK ("orders"."restored_at" is null or "orders"."status" in ('expired', 'cancelled'))
);
--> statement-breakpoint
CREATE TABLE "sales" (
	"id" text PRIMARY KEY NOT NULL,
	"product_id" text NOT NULL,
	"name" text NOT NULL,
	"price_cents" integer NOT NULL,
	"initial_stock" integer NOT NULL,
	"stock_adjustments" integer DEFAULT 0 NOT NULL,
	"per_user_limit" integer NOT NULL,
	"starts_at" timestamp with time zone NOT NULL,
	"ends_at" timestamp with time zone NOT NULL,
	"payment_window_seconds" integer NOT NULL,
	"product_token" text NOT NULL,
	"paused" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "sales_price_cents_check" CHECK ("sales"."price_cents" >= 0),
	CONSTRAINT "sales_initial_stock_check" CHECK ("sales"."initial_stock" >= 0),
	CONSTRAINT "sales_stock_check" CHECK ("sales"."initial_stock" + "sales"."stock_adjustments" >= 0),
	CONSTRAINT "sales_per_user_limit_check" CHECK ("sales"."per_user_limit" >= 1),
	CONSTRAINT "sales_window_check" CHECK ("sales"."ends_at" > "sales"."starts_at"),
	CONSTRAINT "sales_payment_window_check" CHECK ("sales"."payment_window_seconds" >= 1)
);
--> statement-breakpoint
CREATE TABLE "stock_adjustments" (
	"id" text PRIMARY KEY NOT NULL,
	"sale_id" text NOT NULL,
	"delta" integer NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "holdings" ADD CONSTRAINT "holdings_sale_id_sales_id_fk" FOREIGN KEY ("sale_id") REFERENCES "public"."sales"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "order_events" ADD CONSTRAINT "order_events_order_id_orders_id_fk" FOREIGN KEY ("order_id") REFERENCES "public"."orders"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "orders" ADD CONSTRAINT "orders_sale_id_sales_id_fk" FOREIGN KEY ("sale_id") REFERENCES "public"."sales"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "stock_adjustments" ADD CONSTRAINT "stock_adjustments_sale_id_sales_id_fk" FOREIGN KEY ("sale_id") REFERENCES "public"."sales"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "order_events_order_type_key" ON "order_events" USING btree ("order_id","type");--> statement-breakpoint
CREATE INDEX "orders_sale_status_idx" ON "orders" USING btree ("sale_id","status");--> statement-breakpoint
CREATE INDEX "orders_unrestored_idx" ON "orders" USING btree ("sale_id") WHERE "orders"."status" in ('expired', 'cancelled') and "orders"."restored_at" is null;--> statement-breakpoint
CREATE UNIQUE INDEX "sales_product_token_key" ON "sales" USING btree ("product_token");
CREATE TABLE "sale_counters" (
	"sale_id" text NOT NULL,
	"shard" smallint DEFAULT 0 NOT NULL,
	"orders" integer DEFAULT 0 NOT NULL,
	"awaiting_payment" integer DEFAULT 0 NOT NULL,
	"paid" integer DEFAULT 0 NOT NULL,
	"expired" integer DEFAULT 0 NOT NULL,
	"cancelled" integer DEFAULT 0 NOT NULL,
	"live_units" integer DEFAULT 0 NOT NULL,
	"unrestored_units" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "sale_counters_sale_id_shard_pk" PRIMARY KEY("sale_id","shard")
);
--> statement-breakpoint
CREATE INDEX "holdings_over_limit_idx" ON "holdings" USING btree ("sale_id") WHERE "holdings"."units" > "holdings"."per_user_limit";--> statement-breakpoint
CREATE INDEX "orders_sale_written_idx" ON "orders" USING btree ("sale_id","written_at","id");
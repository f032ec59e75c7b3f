CREATE TABLE "sale_counters" (
	"sale_id" text PRIMARY KEY NOT NULL,
	"orders" integer DEFAULT 0 NOT NULL,
	"awaiting_payment" integer DEFAULT 0 NOT NULL,
	"paid" integer DEFAULT 0 NOT NULL,
	"expired" integer DEFAULT 0 NOT NULL,
	"cancelled" integer DEFAULT 0 NOT NULL,
	"live_units" integer DEFAULT 0 NOT NULL,
	"unrestored_units" integer DEFAULT 0 NOT NULL
);

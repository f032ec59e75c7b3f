CREATE TABLE "room_records" (
	"sale_id" text PRIMARY KEY NOT NULL,
	"seed" text NOT NULL,
	"seed_hash" text NOT NULL,
	"fields" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"entries" jsonb,
	"v" bigint DEFAULT 0 NOT NULL,
	"through" bigint DEFAULT 0 NOT NULL,
	"gen" integer DEFAULT 0 NOT NULL,
	"complete" boolean DEFAULT false NOT NULL
);
--> statement-breakpoint
CREATE TABLE "room_tickets" (
	"sale_id" text NOT NULL,
	"user_id" text NOT NULL,
	"ticket" jsonb NOT NULL,
	"v" bigint NOT NULL,
	CONSTRAINT "room_tickets_sale_id_user_id_pk" PRIMARY KEY("sale_id","user_id")
);
--> statement-breakpoint
ALTER TABLE "room_records" ADD CONSTRAINT "room_records_sale_id_sales_id_fk" FOREIGN KEY ("sale_id") REFERENCES "public"."sales"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "room_tickets" ADD CONSTRAINT "room_tickets_sale_id_sales_id_fk" FOREIGN KEY ("sale_id") REFERENCES "public"."sales"("id") ON DELETE cascade ON UPDATE no action;
ALTER TABLE "webhook_sale_status" ADD COLUMN "previous_status" text;--> statement-breakpoint
ALTER TABLE "webhook_sale_status" ADD COLUMN "epoch" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "webhook_sale_status" ADD COLUMN "stamp" bigint DEFAULT 0 NOT NULL;
ALTER TABLE "orders" ADD COLUMN "epoch" integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "sales" ADD COLUMN "epoch" integer DEFAULT 1 NOT NULL;
ALTER TABLE "sales" ADD COLUMN "admission" text DEFAULT 'open' NOT NULL;--> statement-breakpoint
ALTER TABLE "sales" ADD COLUMN "proof_of_work" boolean DEFAULT false NOT NULL;
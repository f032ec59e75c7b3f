ALTER TABLE "webhook_endpoints" DROP COLUMN "previous_secret";--> statement-breakpoint
ALTER TABLE "webhook_endpoints" DROP COLUMN "previous_secret_expires_at";
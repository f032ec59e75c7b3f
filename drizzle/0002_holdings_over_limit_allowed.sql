ALTER TABLE "holdings" DROP CONSTRAINT "holdings_units_check";--> statement-breakpoint
ALTER TABLE "holdings" ADD CONSTRAINT "holdings_units_check" CHECK ("holdings"."units" >= 0);
-- The operators' audit log (src/db/audit-log.ts): one row per operator change, appended in the same
-- transaction or statement as the change, never updated or deleted. Rows are hash-chained: a BEFORE
-- INSERT trigger takes a transaction lock, gives the row the next id, and sets prev_hash to the newest
-- row's hash and hash to sha256(prev_hash, the row's content), so ids and the chain are one line.
CREATE TABLE "audit_log" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	"actor" text NOT NULL,
	"action" text NOT NULL,
	"sale_id" text,
	"target" text,
	"before" jsonb,
	"after" jsonb,
	"request_id" text NOT NULL,
	"prev_hash" text NOT NULL,
	"hash" text NOT NULL
);--> statement-breakpoint
-- the id is the trigger's (taken under its lock), so the column has no default to spend a number on
ALTER TABLE "audit_log" ALTER COLUMN "id" DROP DEFAULT;--> statement-breakpoint
CREATE INDEX "audit_log_sale_idx" ON "audit_log" USING btree ("sale_id","id");--> statement-breakpoint
CREATE OR REPLACE FUNCTION audit_log_hash(prev_hash text, id bigint, at timestamptz, actor text, action text,
    sale_id text, target text, before jsonb, after jsonb, request_id text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT encode(sha256(convert_to(prev_hash || jsonb_build_array(id::text,
    to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), actor, action, sale_id, target, before, after,
    request_id)::text, 'UTF8')), 'hex')
$$;--> statement-breakpoint
CREATE OR REPLACE FUNCTION audit_log_chain() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  prev text;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('audit_log'));
  NEW.id := nextval(pg_get_serial_sequence('audit_log', 'id'));
  NEW.at := coalesce(NEW.at, now());
  SELECT hash INTO prev FROM audit_log ORDER BY id DESC LIMIT 1;
  NEW.prev_hash := coalesce(prev, '');
  NEW.hash := audit_log_hash(NEW.prev_hash, NEW.id, NEW.at, NEW.actor, NEW.action, NEW.sale_id, NEW.target,
    NEW.before, NEW.after, NEW.request_id);
  RETURN NEW;
END
$$;--> statement-breakpoint
CREATE TRIGGER audit_log_chain BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION audit_log_chain();--> statement-breakpoint
CREATE OR REPLACE FUNCTION audit_log_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_log is append-only (% refused)', TG_OP USING ERRCODE = 'insufficient_privilege';
END
$$;--> statement-breakpoint
CREATE TRIGGER audit_log_no_change BEFORE UPDATE OR DELETE ON audit_log FOR EACH ROW EXECUTE FUNCTION audit_log_immutable();--> statement-breakpoint
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log FOR EACH STATEMENT EXECUTE FUNCTION audit_log_immutable();

-- The previous secret of an endpoint still inside its 24 h becomes its first retired secret (0007 added the
-- list, 0009 drops the single previous secret), so a deploy of the list takes no secret back from a receiver.
UPDATE "webhook_endpoints"
SET "retired_secrets" = jsonb_build_array(jsonb_build_object(
  'secret', "previous_secret",
  'expiresAt', to_char("previous_secret_expires_at" at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')))
WHERE "previous_secret" IS NOT NULL AND "previous_secret_expires_at" > now();

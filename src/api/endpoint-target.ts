import type { Config } from "../env";
import { ApiError } from "../http/api-error";
import { targetRefusal } from "../webhooks/endpoint-target";

/**
 * `POST /api/admin/webhooks`' definition once its `url` is known to point outside: a target that is not
 * a public address (src/webhooks/endpoint-target.ts) is 400 INVALID_REQUEST naming `url`, as a schema's
 * refusal is, unless WEBHOOK_ALLOW_PRIVATE_TARGETS allows it (the local stack's receivers).
 *
 * @example
 * const definition = publicEndpoint(deps(c).config, c.req.valid("json"));
 */
export function publicEndpoint<T extends { url: string }>(
  config: Pick<Config, "WEBHOOK_ALLOW_PRIVATE_TARGETS">,
  definition: T,
): T {
  const why = config.WEBHOOK_ALLOW_PRIVATE_TARGETS ? null : targetRefusal(definition.url);
  if (!why) return definition;
  const message = `url must point at a public address: ${why}.`;
  throw new ApiError("INVALID_REQUEST", message, { details: { fields: { url: message } } });
}

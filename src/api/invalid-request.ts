import type { Context } from "hono";
import type { z } from "zod";
import { ApiError, renderError } from "../errors";

/** A validator's result as `@hono/zod-openapi` hands it to the hook. */
type ValidationResult = { success: true } | { success: false; error: z.ZodError; target: string };

/** The 400 for a request that fails its route's schema: the first problem as the message, each in `fields`. */
export function invalidRequest(error: z.ZodError, target: string): ApiError {
  const fields: Record<string, string> = {};
  for (const issue of error.issues) {
    const name = issue.path.map(String).join(".") || (target === "json" ? "body" : target);
    fields[name] ??= issue.message;
  }
  const names = Object.keys(fields);
  const message =
    names.length === 1
      ? (error.issues[0]?.message ?? "The request is invalid.")
      : "Some inputs are invalid; see fields.";
  return new ApiError("INVALID_REQUEST", message, { details: { fields } });
}

/**
 * The validation hook every route shares (the app's `defaultHook`): a request that fails its schema is
 * answered with the contract's 400 INVALID_REQUEST before the handler runs.
 */
export function validationHook(result: ValidationResult, c: Context): Response | undefined {
  if (result.success) return undefined;
  return renderError(c, invalidRequest(result.error, result.target));
}

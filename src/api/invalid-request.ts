import type { z } from "zod";
import { ApiError } from "../http/api-error";

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

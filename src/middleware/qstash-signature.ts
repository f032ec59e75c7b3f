import { Receiver } from "@upstash/qstash";
import type { MiddlewareHandler } from "hono";
import { ApiError } from "../errors";

export type SignedJobVariables = { jobBody: string };

const MAX_JOB_BODY_BYTES = 64 * 1024;

/**
 * Verifies a QStash delivery (`Upstash-Signature`) with the current and the next signing key against
 * the exact URL it was sent to and the raw body. `Receiver.verify` throws on a bad signature: that is
 * 401 and the handler never runs. The verified raw body is left in `c.var.jobBody`.
 */
export function qstashSignature(options: {
  keys: (c: Parameters<MiddlewareHandler>[0]) => { current: string; next: string };
}) {
  return async function qstashSignatureMiddleware(c, next) {
    const signature = c.req.header("Upstash-Signature");
    if (!signature) throw new ApiError("UNAUTHENTICATED", "Missing Upstash-Signature.");
    const body = await c.req.text();
    if (body.length > MAX_JOB_BODY_BYTES) throw new ApiError("PAYLOAD_TOO_LARGE", "Job body too large.");
    const { current, next: nextKey } = options.keys(c);
    const receiver = new Receiver({ currentSigningKey: current, nextSigningKey: nextKey });
    let valid = false;
    try {
      valid = await receiver.verify({ signature, body, url: c.req.url });
    } catch {
      valid = false;
    }
    if (!valid) throw new ApiError("UNAUTHENTICATED", "Invalid Upstash-Signature.");
    c.set("jobBody", body);
    await next();
  } satisfies MiddlewareHandler<{ Variables: SignedJobVariables }>;
}

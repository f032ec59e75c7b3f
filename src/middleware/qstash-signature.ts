import type { MiddlewareHandler } from "hono";
import type { SignedJobVariables } from "../context";
import { ApiError } from "../http/api-error";
import { readBoundedBody } from "../http/read-body";
import { cacheBodyText } from "./json-body";
import { verifyQStashSignature } from "./qstash-token";

/**
 * The URL QStash signed for this delivery: the one the engine published to, `publicUrl` (PUBLIC_URL)
 * with the request's path and query. Not the URL the server sees: behind a TLS-terminating proxy that
 * is `http://…` (or another host) while QStash was given, and signed, `https://…`.
 */
export function publishedUrl(publicUrl: string, requestUrl: string): string {
  const { pathname, search } = new URL(requestUrl);
  return `${publicUrl.replace(/\/+$/, "")}${pathname}${search}`;
}

/**
 * Verifies a QStash delivery (`Upstash-Signature`) with the current and the next signing key against
 * the URL it was published to ({@link publishedUrl}) and the raw body. The signature covers the body, so the body has to be
 * read first: at most `maxBodyBytes` of it (a larger one is 413 PAYLOAD_TOO_LARGE, refused by its
 * Content-Length before it is read, or cut off while it streams). A bad
 * signature (src/middleware/qstash-token.ts, what @upstash/qstash's `Receiver.verify` decides) is 401 and the handler never runs. The verified raw body is left in `c.var.jobBody`
 * and in Hono's body cache, where the route's validator (api/validate-request.ts) reads it.
 *
 * @example
 * app.post("/order-write", qstashSignature({ keys, publicUrl, maxBodyBytes: 64 * 1024 }), handler)
 */
export function qstashSignature(options: {
  keys: (c: Parameters<MiddlewareHandler>[0]) => { current: string; next: string };
  /** The origin (and path prefix) jobs are published to: PUBLIC_URL. */
  publicUrl: (c: Parameters<MiddlewareHandler>[0]) => string;
  maxBodyBytes: number;
}) {
  return async function qstashSignatureMiddleware(c, next) {
    const signature = c.req.header("Upstash-Signature");
    if (!signature) throw new ApiError("UNAUTHENTICATED", "Missing Upstash-Signature.");
    const body = await readBoundedBody(c.req.raw, options.maxBodyBytes, "PAYLOAD_TOO_LARGE");
    const url = publishedUrl(options.publicUrl(c), c.req.url);
    const valid = verifyQStashSignature(
      signature,
      { body, url },
      options.keys(c),
      Math.floor(Date.now() / 1000),
    );
    if (!valid) throw new ApiError("UNAUTHENTICATED", "Invalid Upstash-Signature.");
    c.set("jobBody", body);
    cacheBodyText(c.req, body);
    await next();
  } satisfies MiddlewareHandler<{ Variables: SignedJobVariables }>;
}

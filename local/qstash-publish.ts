/**
 * Turns a QStash publish request (`POST /v2/publish/<destination>`, or one entry of `/v2/batch`) into a
 * message, reading the headers `@upstash/qstash` 2.12 sends (see its `processHeaders`):
 * `Upstash-Method`, `Upstash-Delay` ("30s", "5m", "1h", "2d", combined "1h30m"), `Upstash-Not-Before`
 * (unix seconds, wins over the delay), `Upstash-Retries`, `Upstash-Retry-Delay` (milliseconds, constant
 * only), `Upstash-Timeout`, `Upstash-Callback`, `Upstash-Failure-Callback`, `Upstash-Deduplication-Id`,
 * `Upstash-Content-Based-Deduplication`, `Upstash-Forward-*` (sent on as `*`), `Upstash-Callback-Forward-*`,
 * `Upstash-Failure-Callback-Forward-*` and `Content-Type`.
 *
 * Destinations and callbacks must be loopback URLs: the local server never sends anything off the machine.
 *
 * @example
 * const parsed = parsePublish({ destination, headers: new Headers(req.headers), body, maxRetries: 3 });
 * if ("error" in parsed) return 400; else scheduler.enqueue(parsed.message);
 */
import { createHash } from "node:crypto";
import { newMessageId, type QStashMessage } from "./qstash-message";

export type PublishInput = {
  destination: string;
  headers: Headers;
  body: Buffer;
  maxRetries: number;
  now?: number;
};
export type Parsed = { message: QStashMessage; deduplicationId?: string } | { error: string };

const METHODS = new Set(["GET", "POST", "PUT", "DELETE", "PATCH"]);
const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DEFAULT_TIMEOUT_MS = 30_000;

export function parsePublish(input: PublishInput): Parsed {
  const { headers, body } = input;
  const now = input.now ?? Date.now();
  const url = loopbackUrl(input.destination);
  if (!url)
    return {
      error: `invalid destination: ${input.destination} (the local QStash delivers to loopback only)`,
    };
  const method = (headers.get("upstash-method") ?? "POST").toUpperCase();
  if (!METHODS.has(method)) return { error: `invalid Upstash-Method: ${method}` };

  const delayMs = duration(headers.get("upstash-delay"));
  const notBefore = headers.get("upstash-not-before");
  if (delayMs === null) return { error: "invalid Upstash-Delay" };
  if (notBefore !== null && !/^\d+$/.test(notBefore)) return { error: "invalid Upstash-Not-Before" };
  const retries = headers.get("upstash-retries");
  if (retries !== null && !/^\d+$/.test(retries)) return { error: "invalid Upstash-Retries" };
  const timeoutMs = duration(headers.get("upstash-timeout"));
  if (timeoutMs === null) return { error: "invalid Upstash-Timeout" };
  const retryDelay = headers.get("upstash-retry-delay");
  const callback = optionalUrl(headers.get("upstash-callback"));
  const failureCallback = optionalUrl(headers.get("upstash-failure-callback"));
  if (callback === null || failureCallback === null) return { error: "invalid callback URL (loopback only)" };

  const forwarded = prefixed(headers, "upstash-forward-");
  const contentType = headers.get("content-type");
  if (contentType) forwarded["content-type"] = contentType;
  const message: QStashMessage = {
    messageId: newMessageId(),
    url,
    method,
    headers: forwarded,
    body,
    createdAt: now,
    notBefore: notBefore !== null ? Number(notBefore) * 1_000 : now + (delayMs ?? 0),
    maxRetries: retries !== null ? Number(retries) : input.maxRetries,
    ...(retryDelay !== null && /^\d+$/.test(retryDelay.trim()) ? { retryDelayMs: Number(retryDelay) } : {}),
    timeoutMs: timeoutMs ?? DEFAULT_TIMEOUT_MS,
    ...(callback ? { callback } : {}),
    ...(failureCallback ? { failureCallback } : {}),
    callbackHeaders: prefixed(headers, "upstash-callback-forward-"),
    failureCallbackHeaders: prefixed(headers, "upstash-failure-callback-forward-"),
  };
  const deduplicationId =
    headers.get("upstash-deduplication-id") ??
    (headers.get("upstash-content-based-deduplication") === "true" ? contentHash(message) : undefined);
  return deduplicationId === undefined ? { message } : { message, deduplicationId };
}

/** Milliseconds of "30s", "5m", "1h30m", "2d" or bare seconds; undefined when absent, null when invalid. */
function duration(value: string | null): number | undefined | null {
  if (value === null || value.trim() === "") return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1_000;
  if (!/^(\d+(ms|s|m|h|d))+$/.test(text)) return null;
  let total = 0;
  for (const [, amount, unit] of text.matchAll(/(\d+)(ms|s|m|h|d)/g))
    total += Number(amount) * (UNIT_MS[unit ?? "s"] ?? 0);
  return total;
}

function loopbackUrl(value: string): string | undefined {
  try {
    const url = new URL(value);
    const host = url.hostname.replace(/^\[|\]$/g, "");
    const loopback = host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);
    return (url.protocol === "http:" || url.protocol === "https:") && loopback ? value : undefined;
  } catch {
    return undefined;
  }
}

/** undefined when absent, null when not an allowed URL. */
function optionalUrl(value: string | null): string | undefined | null {
  if (value === null || value === "") return undefined;
  return loopbackUrl(value) ?? null;
}

function prefixed(headers: Headers, prefix: string): Record<string, string> {
  const found: Record<string, string> = {};
  for (const [name, value] of headers) if (name.startsWith(prefix)) found[name.slice(prefix.length)] = value;
  return found;
}

/** Content-based deduplication: destination, forwarded headers and body, hashed. */
function contentHash(message: QStashMessage): string {
  const headers = Object.entries(message.headers).sort(([a], [b]) => a.localeCompare(b));
  return createHash("sha256")
    .update(JSON.stringify([message.url, message.method, headers]))
    .update(message.body)
    .digest("hex");
}

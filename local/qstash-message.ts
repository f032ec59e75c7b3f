/**
 * What the local QStash server keeps about a message, and how QStash renders it: the DLQ entry (as
 * QStash's `GET /v2/dlq` lists one; the local server keeps them in process, `dlq()`), the callback
 * payload (JSON with `status`, `header`, base64 `body` of the destination's answer, `sourceMessageId`,
 * base64 `sourceBody`, …), and the parsing of `Retry-After`.
 */
import { randomUUID } from "node:crypto";

export type QStashMessage = {
  messageId: string;
  url: string;
  method: string;
  /** Sent to the destination as they are (the publisher's Upstash-Forward-* headers and Content-Type). */
  headers: Record<string, string>;
  body: Buffer;
  createdAt: number;
  notBefore: number;
  maxRetries: number;
  retryDelayMs?: number;
  timeoutMs: number;
  callback?: string;
  failureCallback?: string;
  callbackHeaders: Record<string, string>;
  failureCallbackHeaders: Record<string, string>;
  /** A callback delivery: retried, but never calls back itself. */
  isCallback?: boolean;
};
/** A message while the scheduler holds it. */
export type Tracked = QStashMessage & {
  retried: number;
  state: "CREATED" | "ACTIVE" | "RETRY" | "CANCELED" | "DONE";
};
/** What one delivery attempt got back (status 0: no answer). */
export type Outcome = { status: number; headers: Headers; body: Buffer };

export function newMessageId(): string {
  return `msg_${randomUUID().replaceAll("-", "")}`;
}

/** A DLQ message as `GET /v2/dlq` lists it: the message plus the last answer it got. */
export type DlqEntry = Record<string, unknown> & { dlqId: string };

export function dlqEntry(msg: Tracked, outcome: Outcome): DlqEntry {
  return {
    ...messageView(msg),
    dlqId: `dlq_${randomUUID().replaceAll("-", "")}`,
    responseStatus: outcome.status,
    responseHeader: headerArrays(Object.fromEntries(outcome.headers)),
    ...bodyFields(outcome.body, "responseBody"),
  };
}

/** The message that calls `msg`'s callback or failure callback back, once `msg` got `outcome`. */
export function callbackMessage(
  msg: Tracked,
  kind: "callback" | "failureCallback",
  outcome: Outcome,
  dlqId?: string,
): QStashMessage {
  const now = Date.now();
  return {
    messageId: newMessageId(),
    url: msg[kind] ?? "",
    method: "POST",
    headers: { "Content-Type": "application/json", ...msg[`${kind}Headers`] },
    body: Buffer.from(JSON.stringify(callbackPayload(msg, outcome, dlqId))),
    createdAt: now,
    notBefore: now,
    maxRetries: 3,
    timeoutMs: msg.timeoutMs,
    callbackHeaders: {},
    failureCallbackHeaders: {},
    isCallback: true,
  };
}

/** The body QStash posts to a callback or failure callback URL. */
function callbackPayload(msg: Tracked, outcome: Outcome, dlqId: string | undefined) {
  return {
    status: outcome.status,
    header: headerArrays(Object.fromEntries(outcome.headers)),
    body: outcome.body.toString("base64"),
    retried: msg.retried,
    maxRetries: msg.maxRetries,
    ...(dlqId ? { dlqId } : {}),
    sourceMessageId: msg.messageId,
    url: msg.url,
    method: msg.method,
    sourceHeader: headerArrays(msg.headers),
    sourceBody: msg.body.toString("base64"),
    notBefore: String(msg.notBefore),
    createdAt: String(msg.createdAt),
    callerIP: "127.0.0.1",
  };
}

/** The message as QStash shows it (`GET /v2/messages/:id`, and inside a DLQ entry). */
function messageView(msg: Tracked): Record<string, unknown> {
  const { messageId, url, method, maxRetries, notBefore, createdAt, callback, failureCallback } = msg;
  const view = { messageId, url, method, maxRetries, notBefore, createdAt, callback, failureCallback };
  return {
    ...view,
    header: headerArrays(msg.headers),
    ...bodyFields(msg.body, "body"),
    callerIp: "127.0.0.1",
  };
}

function bodyFields(body: Buffer, name: string): Record<string, string> {
  const text = body.toString("utf8");
  return Buffer.from(text, "utf8").equals(body)
    ? { [name]: text }
    : { [`${name}Base64`]: body.toString("base64") };
}

function headerArrays(headers: Record<string, string>): Record<string, string[]> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]]));
}

/** `Retry-After` as milliseconds from now: delay-seconds or an HTTP date. */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value) * 1_000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

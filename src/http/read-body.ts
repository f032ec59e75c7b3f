import { ApiError, type ErrorCode } from "./api-error";

/**
 * Reads a request body of at most `maxBytes` bytes as text, without buffering more than that: a larger
 * body is refused by its Content-Length before a byte is read, and a body without one (chunked) or
 * longer than it says is cut off as it streams, once past the cap. Refused with `tooLargeCode`: 400
 * INVALID_REQUEST by default (the contract's answer for an oversize buy body), 413 PAYLOAD_TOO_LARGE
 * for job deliveries.
 *
 * @example
 * const text = await readBoundedBody(c.req.raw, 1024);
 * const job = await readBoundedBody(c.req.raw, 64 * 1024, "PAYLOAD_TOO_LARGE");
 */
export async function readBoundedBody(
  req: Request,
  maxBytes: number,
  tooLargeCode: Extract<ErrorCode, "INVALID_REQUEST" | "PAYLOAD_TOO_LARGE"> = "INVALID_REQUEST",
): Promise<string> {
  const tooLarge = () => new ApiError(tooLargeCode, `The body must be at most ${maxBytes} bytes.`);
  const length = req.headers.get("Content-Length");
  const declared = Number(length ?? "0");
  if (declared > maxBytes) throw tooLarge();
  // With a Content-Length the HTTP framing bounds the body to it (checked above), so it is read at once;
  // the stream reader below (chunked bodies) costs far more per request on Bun and Deno.
  if (length !== null && /^\d{1,9}$/.test(length)) {
    if (declared === 0) return "";
    return decodeUtf8(new Uint8Array(await req.arrayBuffer()), maxBytes, tooLarge);
  }
  if (!req.body) return "";
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return decodeUtf8(bytes, maxBytes, tooLarge);
}

/** Stateless between calls (each `decode` without `stream` is whole), so one serves every request. */
const utf8 = new TextDecoder("utf-8", { fatal: true });

function decodeUtf8(bytes: Uint8Array, maxBytes: number, tooLarge: () => ApiError): string {
  if (bytes.byteLength > maxBytes) throw tooLarge();
  try {
    return utf8.decode(bytes);
  } catch {
    throw new ApiError("INVALID_REQUEST", "The body is not valid UTF-8.");
  }
}

/**
 * Parses a JSON object body; an empty body is `{}`. Anything that is not a JSON object is 400.
 */
export function parseJsonObject(text: string): Record<string, unknown> {
  if (text.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ApiError("INVALID_REQUEST", "The body is not valid JSON.");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ApiError("INVALID_REQUEST", "The body must be a JSON object.");
  }
  return value as Record<string, unknown>;
}

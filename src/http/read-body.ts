import { ApiError } from "../errors";

/**
 * Reads a request body of at most `maxBytes` bytes as text, without buffering more than that: a larger
 * body (by Content-Length or as it streams) is 400 INVALID_REQUEST (the contract's limit for buy bodies).
 */
export async function readBoundedBody(req: Request, maxBytes: number): Promise<string> {
  const declared = Number(req.headers.get("Content-Length") ?? "0");
  if (declared > maxBytes) throw tooLarge(maxBytes);
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
      throw tooLarge(maxBytes);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new ApiError("INVALID_REQUEST", "The body is not valid UTF-8.");
  }
}

function tooLarge(maxBytes: number): ApiError {
  return new ApiError("INVALID_REQUEST", `The body must be at most ${maxBytes} bytes.`);
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

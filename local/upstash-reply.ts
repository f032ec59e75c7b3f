/**
 * Redis replies in Upstash's JSON form, written as text so that 64-bit integers keep every digit:
 * Upstash answers an integer reply as a JSON number with all its digits (`{"result":9007199254740993}`;
 * a JavaScript client may round it when it parses, the wire does not). Replies arrive from
 * `redis-connections.ts` with integers as decimal strings and everything else as Buffers.
 *
 * - `Upstash-Encoding: base64`: every string is base64, nested arrays too, except a top-level plain
 *   `"OK"`; integers stay numbers, nil is `null`; RESP2 shapes (flat HGETALL arrays).
 *
 * @example
 * const text = replyJson({ result: reply(await run(conn, ["INCR", "n"]), false) });
 */

/** An integer reply, kept as its decimal digits. */
export class Int {
  constructor(readonly digits: string) {}
}

/** A Redis reply (raw from the connection) as the value to put under `result`. */
export function reply(value: unknown, base64: boolean, top = true): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === "string") return new Int(value);
  if (typeof value === "number") return new Int(String(value));
  if (Array.isArray(value)) return value.map((v) => reply(v, base64, false));
  if (value instanceof Error) return reply(Buffer.from(value.message), base64, top);
  const bytes = Buffer.isBuffer(value) ? value : Buffer.from(String(value));
  if (!base64) return bytes.toString("utf8");
  return top && bytes.length === 2 && bytes.toString() === "OK" ? "OK" : bytes.toString("base64");
}

/** JSON text of a body that may hold `Int`s (written as bare numbers). */
export function replyJson(body: unknown): string {
  if (body instanceof Int) return body.digits;
  if (Array.isArray(body)) return `[${body.map(replyJson).join(",")}]`;
  if (body !== null && typeof body === "object")
    return `{${Object.entries(body)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${JSON.stringify(k)}:${replyJson(v)}`)
      .join(",")}}`;
  return JSON.stringify(body) ?? "null";
}

/**
 * HGETALL as a record. The client runs without automatic deserialisation (values stay strings), so
 * hash replies arrive as flat `[field, value, …]` arrays; an object is passed through.
 */
export function toRecord(reply: unknown): Record<string, string> | null {
  if (reply === null || reply === undefined) return null;
  if (Array.isArray(reply)) {
    if (reply.length === 0) return null;
    const record: Record<string, string> = {};
    for (let i = 0; i + 1 < reply.length; i += 2) record[String(reply[i])] = String(reply[i + 1]);
    return record;
  }
  if (typeof reply === "object") {
    const entries = Object.entries(reply as Record<string, unknown>);
    return entries.length === 0 ? null : Object.fromEntries(entries.map(([k, v]) => [k, String(v)]));
  }
  return null;
}

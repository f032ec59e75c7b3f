/**
 * The query filters of QStash's bulk endpoints, as its API reference lists them
 * (https://upstash.com/docs/qstash/api-reference/dlq/list-dlq-messages, …/bulk-delete-dlq-messages,
 * …/messages/bulk-cancel-messages): ids (`dlqIds` / `messageIds`, other filters then ignored), field
 * filters (a repeated or comma-separated parameter matches any of its values; several parameters must all
 * match), `fromDate`/`toDate` (inclusive, ms, on `createdAt`), `count` (at most that many; 100 by default
 * and at most for listing) and `cursor` (where the previous page stopped). An unknown parameter is refused
 * with its name rather than ignored.
 *
 * @example
 * const picked = selectBy(url, scheduler.dlq(), { idParam: "dlqIds", idOf: (e) => e.dlqId, maxCount: 100 });
 * if ("error" in picked) return 400; else return { messages: picked.items, cursor: picked.cursor };
 */

/** Filters that compare a field of the message (the local server stores none it does not support). */
const FIELDS: Record<string, string> = {
  messageId: "messageId",
  url: "url",
  topicName: "topicName",
  scheduleId: "scheduleId",
  queueName: "queueName",
  api: "api",
  label: "label",
  flowControlKey: "flowControlKey",
  responseStatus: "responseStatus",
  callerIp: "callerIp",
};

export type Selection<T> = { items: T[]; cursor?: string } | { error: string };

export function selectBy<T extends Record<string, unknown>>(
  url: URL,
  all: T[],
  options: { idParam: string; idOf: (item: T) => string; maxCount?: number; extra?: string[] },
): Selection<T> {
  const params = url.searchParams;
  const known = new Set([
    options.idParam,
    "count",
    "cursor",
    "order",
    "fromDate",
    "toDate",
    ...Object.keys(FIELDS),
  ]);
  for (const name of options.extra ?? []) known.add(name);
  const unknown = [...params.keys()].find((k) => !known.has(k));
  if (unknown) return { error: `unsupported filter: ${unknown}` };
  const values = (name: string) =>
    params
      .getAll(name)
      .flatMap((v) => v.split(","))
      .filter(Boolean);

  const count = params.has("count") ? Number(params.get("count")) : undefined;
  if (count !== undefined && (!Number.isInteger(count) || count < 0))
    return { error: "count must be a non-negative integer" };
  const offset = params.has("cursor") ? Number(params.get("cursor")) : 0;
  if (!Number.isInteger(offset) || offset < 0) return { error: "invalid cursor" };
  const order = params.get("order") ?? "earliestFirst";
  if (order !== "earliestFirst" && order !== "latestFirst") return { error: `invalid order: ${order}` };
  const from = params.has("fromDate") ? Number(params.get("fromDate")) : Number.NEGATIVE_INFINITY;
  const to = params.has("toDate") ? Number(params.get("toDate")) : Number.POSITIVE_INFINITY;
  if (Number.isNaN(from) || Number.isNaN(to)) return { error: "fromDate and toDate are unix milliseconds" };

  const ids = values(options.idParam);
  const fieldFilters = Object.entries(FIELDS)
    .map(([param, field]) => [field, values(param)] as const)
    .filter(([, wanted]) => wanted.length > 0);
  const matching = all.filter((item) => {
    if (ids.length > 0) return ids.includes(options.idOf(item));
    const at = Number(item.createdAt);
    if (at < from || at > to) return false;
    return fieldFilters.every(
      ([field, wanted]) => item[field] !== undefined && wanted.includes(String(item[field])),
    );
  });
  const sorted = [...matching].sort((a, b) => Number(a.createdAt) - Number(b.createdAt));
  if (order === "latestFirst") sorted.reverse();
  const limit = Math.min(count ?? Number.POSITIVE_INFINITY, options.maxCount ?? Number.POSITIVE_INFINITY);
  const items = sorted.slice(offset, offset + limit);
  const next = offset + items.length;
  return next < sorted.length ? { items, cursor: String(next) } : { items };
}

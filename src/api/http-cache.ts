import { z } from "@hono/zod-openapi";

/** `If-None-Match`: a client (or a cache) that holds an answer asks whether it is still current. */
export const ifNoneMatchHeaders = z.object({
  "If-None-Match": z
    .string()
    .optional()
    .openapi({
      param: { name: "If-None-Match", in: "header" },
      description: "The `ETag` of an answer held: 304 Not Modified, with no body, while it is still current.",
      example: 'W/"dGhlIHNhbGUgYXMgaXQgd2Fz"',
    }),
});

/** What a sale read may be kept for: a second, and two more while a cache asks again. */
export const SALE_CACHE_CONTROL = "public, max-age=1, stale-while-revalidate=2";

/** The headers of an answer a CDN or the browser may keep (sale reads). */
export const cacheHeaders = {
  ETag: {
    description:
      "A weak tag of everything in the body but `serverTime` (the clock reading changes with every answer; the tag only when the sales do). Send it back in `If-None-Match`.",
    required: true,
    schema: { type: "string" as const },
  },
  "Cache-Control": {
    description: `\`${SALE_CACHE_CONTROL}\`: a cache may answer for a second, and for two more while it asks again.`,
    required: true,
    schema: { type: "string" as const },
  },
};

/** A 304 entry of a route's `responses`: no body, the same tag and caching headers. */
export function notModified(description: string) {
  return { description, headers: cacheHeaders };
}

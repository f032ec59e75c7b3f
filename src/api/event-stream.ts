import { z } from "@hono/zod-openapi";

/**
 * `Last-Event-ID`: sent by a reconnecting `EventSource` (or a `fetch` reader). The stream answers the
 * current state first, with ids above this one, however large (src/realtime/event-ids.ts); a value that
 * is not a number is ignored.
 */
export const lastEventIdHeaders = z.object({
  "Last-Event-ID": z
    .string()
    .optional()
    .openapi({
      param: { name: "Last-Event-ID", in: "header" },
      description:
        "The id of the last event received, when reconnecting: the current state comes first, with higher ids, whatever the id's size (a decimal integer of any length is compared exactly). A value that is not a number is ignored.",
      example: "1767261600123",
    }),
});

const FRAMING =
  "Server-Sent Events: each event has an `event:` name, an `id:` that increases along the stream (and stays above a reconnecting client's `Last-Event-ID`) and one `data:` line of JSON. A `: ping` comment comes at least every 15 s while nothing else is written. Errors (JSON, with the status listed) are answered before the stream starts; once it started, the status is 200.";

/**
 * The 200 entry of an event stream route: `text/event-stream`, its events described in words (OpenAPI
 * 3.1 has no schema for the items of a stream) with a reference to each event's data schema.
 *
 * @example
 * responses: { 200: eventStreamResponse("`event: sale`, data a [Sale](#/components/schemas/Sale).", example) }
 */
export function eventStreamResponse(events: string, example: string) {
  return {
    description: `${events}\n\n${FRAMING}`,
    content: {
      "text/event-stream": {
        schema: z.string().openapi({ description: "The event stream's text.", example }),
      },
    },
  };
}

import { createRoute } from "@hono/zod-openapi";
import { apiRouter, type RouteContext, SHOPPER } from "../api/api-router";
import { errorResponses } from "../api/error-responses";
import { eventStreamResponse, lastEventIdHeaders } from "../api/event-stream";
import { saleIdParam } from "../api/sale-schemas";
import { deps } from "../context";
import { ApiError } from "../http/api-error";
import type { Frame } from "../memory/frame";
import { limited } from "../middleware/rate-limit";
import { shopperAuth } from "../middleware/shopper-auth";
import { readOwnTicket, stepRooms, ticketFrame, ticketStale } from "../realtime/room-feed";
import { eventStream, holding, slotFor } from "../responses/event-streams";
import { stepRoom } from "../room/room";
import { findSale, roomNow } from "../room/tickets";

const ticketEvents = createRoute({
  method: "get",
  path: "/{saleId}/queue/events",
  tags: ["Admission", "Realtime"],
  summary: "The shopper's ticket, live",
  description:
    "`event: ticket` with the shopper's Ticket at once, then on every change of its fields: position, frontier, verdict, wait, and the admission once admitted. The server steps each watched room once per refresh, whatever the number of waiters. `EventSource` cannot send the `Authorization` header: read it with `fetch`. Counted in the ticket streams' budget (per shopper), apart from the order streams'.",
  security: SHOPPER,
  middleware: [shopperAuth({ deps: (c) => deps(c) }), limited("queue-events")] as const,
  request: { params: saleIdParam, headers: lastEventIdHeaders },
  responses: {
    200: eventStreamResponse(
      "`event: ticket`, `data:` the shopper's [Ticket](#/components/schemas/Ticket).",
      'event: ticket\nid: 1767261600123\ndata: {"ticketId":"t0k3j5h7g9f1d3s5a7p9o","saleId":"s4k2x9q1m0abc","position":42,"frontier":30,"verdict":"may_get","estimatedWaitSeconds":120}\n\n',
    ),
    ...errorResponses("UNAUTHENTICATED", "UNKNOWN_SALE", "NO_TICKET", "RATE_LIMITED", "UNAVAILABLE"),
  },
});

const noTicket = () => new ApiError("NO_TICKET", "You have no ticket for this sale's queue.");

/**
 * `GET /api/sales/:saleId/queue/events`: the waiter's ticket at once (its own step of the room), then
 * from the process's one room feed (realtime/room-feed.ts): each tick that brings a new room state
 * recomputes this waiter's ticket in memory; its own ticket is read again only when the room passed it.
 */
async function streamTicketEvents(c: RouteContext<typeof ticketEvents>) {
  const d = deps(c);
  const { saleId } = c.req.valid("param");
  const userId = c.get("userId");
  const feed = d.memory.rooms;
  const leases = [slotFor(c, d, "ticket"), feed.watch(saleId, d.now)];
  const opened = await holding(leases, async () => {
    const now = await roomNow(d);
    const sale = await findSale(d, saleId, now);
    if (!sale) throw new ApiError("UNKNOWN_SALE", "No such sale.");
    if ((sale.admission ?? "open") === "open") throw noTicket();
    const outcome = await stepRoom(d, sale, now, { read: userId });
    if (outcome.kind === "not_initialised")
      throw new ApiError("UNAVAILABLE", "The sale is being restored.", { retryAfterSeconds: 2 });
    if (outcome.kind !== "stepped" || !outcome.ticket) throw noTicket();
    const reading = { room: outcome.room, at: now, sale };
    feed.put(saleId, reading, d.now);
    const frame = await ticketFrame(d, undefined, { t: outcome.ticket, reading, userId, now });
    return { frame, t: outcome.ticket, reading };
  });
  let { frame, t, reading } = opened;
  let triedFor: typeof reading | undefined;
  const follow = async (now: number) => {
    if (feed.due(now)) await feed.refresh(now, (ids) => stepRooms(d, ids));
    const next = feed.get(saleId);
    if (!next || next === reading) return;
    if (ticketStale(t, next)) {
      // the waiter's copy is out of date for this room state and cannot be read now (not yet in the
      // room's record, or Redis lost it and the room is being restored): the last frame stands, and the
      // next room state reads it again (once per state); never the old ticket with the new room (a place
      // before the seal shown as a place in the sealed line)
      if (next === triedFor) return;
      triedFor = next;
      const fresh = await readOwnTicket(d, saleId, userId, next.room);
      if (!fresh) return;
      t = fresh;
    }
    reading = next;
    frame = await ticketFrame(d, frame, { t, reading: next, userId, now: next.at });
  };
  return eventStream(c, d, leases, {
    first: frame,
    current: (): Frame => frame,
    refresh: (now) => (feed.due(now) || feed.get(saleId) !== reading ? follow(now) : undefined),
  });
}

export const roomEventRoutes = apiRouter().openapi(ticketEvents, streamTicketEvents);

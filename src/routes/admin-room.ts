import { createRoute } from "@hono/zod-openapi";
import { apiRouter, json, OPERATOR, type RouteContext } from "../api/api-router";
import { errorResponses } from "../api/error-responses";
import { roomFiguresSchema } from "../api/room-schemas";
import { saleIdParam } from "../api/sale-schemas";
import { deps } from "../context";
import { ApiError } from "../http/api-error";
import { readRoomFigures } from "../room/room-figures";

const figuresRoute = createRoute({
  method: "get",
  path: "/sales/{saleId}/queue",
  tags: ["Operator", "Admission"],
  security: OPERATOR,
  summary: "A queue or draw sale's waiting room",
  description:
    "Depth, frontier, cutoff, the units free and held, and how many tickets hold each verdict (the room is stepped first).",
  request: { params: saleIdParam },
  responses: {
    200: json("The room's figures.", roomFiguresSchema),
    ...errorResponses("UNAUTHENTICATED", "UNKNOWN_SALE", "NO_QUEUE", "UNAVAILABLE"),
  },
});

/** `GET /api/admin/sales/:saleId/queue`: the operator's view of a waiting room. */
async function getRoomFigures(c: RouteContext<typeof figuresRoute>) {
  const outcome = await readRoomFigures(deps(c), c.req.valid("param").saleId);
  if (outcome.kind === "unknown_sale") throw new ApiError("UNKNOWN_SALE", "No such sale.");
  if (outcome.kind === "no_queue")
    throw new ApiError("NO_QUEUE", "This sale admits everyone at once: it has no queue.");
  return c.json(outcome.figures, 200);
}

export const adminRoomRoutes = apiRouter().openapi(figuresRoute, getRoomFigures);

import type { AppContext, Deps } from "../context";
import { ApiError } from "../errors";
import type { Lease } from "../realtime/leases";
import type { StreamKind } from "../realtime/stream-budgets";
import { takeStreamSlot } from "../realtime/stream-slots";
import { clientIp } from "../sale/client-ip";

const REFUSED = {
  total: "Too many live streams here right now; poll or retry shortly.",
  client: "Too many live streams for you right now; close one, or poll and retry shortly.",
} as const;

/**
 * A slot for one more stream of `kind`, within its budget (the contract's Realtime: sale streams per
 * client address, order streams per user, the operator's always), or 503 UNAVAILABLE with Retry-After
 * before any stream starts.
 */
export function slotFor(c: AppContext, d: Deps, kind: StreamKind): Lease {
  const { config } = d;
  const slot =
    kind === "operator"
      ? takeStreamSlot(kind, "operator", null, d.now)
      : kind === "order"
        ? takeStreamSlot(
            kind,
            c.get("userId"),
            { total: config.REALTIME_MAX_ORDER_STREAMS, perClient: config.REALTIME_MAX_STREAMS_PER_USER },
            d.now,
          )
        : takeStreamSlot(
            kind,
            clientIp(c.get("clientIp")),
            { total: config.REALTIME_MAX_STREAMS, perClient: config.REALTIME_MAX_STREAMS_PER_IP },
            d.now,
          );
  if ("refused" in slot) throw new ApiError("UNAVAILABLE", REFUSED[slot.refused], { retryAfterSeconds: 5 });
  return slot;
}

import type { SaleRecord } from "../catalog/sale-record";
import type { Deps } from "../services";
import type { StepOutcome } from "../stock/room-step";
import { paidUnits } from "./paid-units";
import { stepRoom } from "./room";
import { roomNow } from "./tickets";

/**
 * A step of the room with the paid units read first (one query), so the step may lower the cutoff:
 * the room feed's tick (src/realtime/room-feed.ts) and the minute sweep's (src/recovery/sweep.ts).
 */
export async function tickRoom(d: Deps, sale: SaleRecord, now: number): Promise<StepOutcome> {
  const paid = await paidUnits(d.db, sale.saleId);
  return stepRoom(d, sale, now, { paidUnits: paid });
}

/** The sweep's step of every queue or draw sale not yet ended: promotions where nobody watches or asks. */
export async function tickRooms(d: Deps, sales: SaleRecord[]): Promise<number> {
  const now = await roomNow(d);
  let stepped = 0;
  for (const sale of sales) {
    if ((sale.admission ?? "open") === "open" || sale.endsAt < now) continue;
    await tickRoom(d, sale, now);
    stepped++;
  }
  return stepped;
}

import { enqueueVoid } from "../orders/enqueue-order";
import { voidOrder } from "../orders/order-lifecycle";
import type { LifecycleDeps } from "../services";
import type { QueuedOrder } from "../stock/queued-order";
import { type VoidOutcome, type VoidRequest, voidReservation } from "../stock/void";

/** What handing a void to QStash may take of the window's end (a publish takes milliseconds when QStash is up). */
const HANDOFF_MS = 500;

/**
 * Voids a buy attempt the server gave up on, so that its 503 ("nothing was reserved") is true.
 *
 * The buy route re-runs an attempt without a reply until its resolve window ends (reserve-stock.ts).
 * If no run was answered, one may have committed, or may still commit later (a request held in the
 * REST layer). Then:
 * 1. the route runs void-reservation.lua once itself ({@link resolveUnanswered}); if Redis answers,
 *    the attempt's fate is settled at once;
 * 2. if Redis does not answer, the void is handed to QStash (`/api/jobs/void-reservation`, a few
 *    seconds later, retried while Redis or Postgres is down) and the route answers 503 anyway;
 * 3. if QStash cannot be reached either, the route logs the attempt and answers 503: the one window
 *    where a reservation may stand behind a 503 (it is then written by the sweeper and expires with
 *    its payment window, holding a unit and the user's allowance until then).
 *
 * The script gives an unclaimed reservation back (units, holding, queued document, outbox entry, the
 * key's stored answer) or, when there is none, leaves a tombstone so that a late run reserves nothing.
 * A reservation it gave back is recorded in Postgres as a cancelled and restored order (inserted
 * cancelled if no write reached Postgres yet, so a write still in flight finds the row and changes
 * nothing; cancelled through the conditional update if the sweeper wrote it meanwhile). A reservation
 * a keyed retry got back as a replay is claimed: the shopper knows its id, so it is left alone.
 */
export async function voidAttempt(deps: LifecycleDeps, req: VoidRequest): Promise<VoidOutcome> {
  const outcome = await voidReservation(deps.redis, req, deps.now);
  if (outcome.kind === "voided" || (outcome.kind === "already_final" && outcome.order)) {
    await voidOrder(deps, outcome.order as QueuedOrder);
  }
  return outcome;
}

/**
 * The buy route's last step for an attempt that got no reply within its window: the claimed order
 * when a keyed retry already took it (answered 202 as a replay), otherwise `voided` (answered 503),
 * after voiding it here or handing the void to QStash. With `by`, both are given up by `answerBy`
 * (the buy's resolve window ends): the void or the publish still under way goes on in `defer`.
 */
export async function resolveUnanswered(
  deps: LifecycleDeps,
  req: VoidRequest,
  by?: { answerBy: number; defer: (work: Promise<unknown>) => void },
): Promise<{ kind: "claimed"; order: QueuedOrder } | { kind: "voided" }> {
  const left = () => (by ? by.answerBy - Date.now() : Number.POSITIVE_INFINITY);
  try {
    // the void's own call gets the time left but a handoff's share (it is safe to repeat: QStash may too)
    const outcome = await inTime(voidAttempt(deps, req), left() - Math.min(HANDOFF_MS, left() / 4), by);
    if (outcome.kind === "claimed") return outcome;
    if (outcome.kind !== "not_initialised") return { kind: "voided" };
  } catch (error) {
    console.warn(`void of ${req.orderId} not settled in the request; handing it to QStash`, error);
  }
  const handing = enqueueVoid(deps, req).catch((error) => {
    console.error(`void of ${req.orderId} could not be handed to QStash: it may stay reserved`, error);
  });
  await inTime(handing, left(), by).catch(() => undefined);
  return { kind: "voided" };
}

/**
 * `work`, or a rejection once `ms` pass (the request answers then; `work` goes on in the background);
 * without a deadline (`by`), `work` as it is.
 */
function inTime<T>(
  work: Promise<T>,
  ms: number,
  by: { defer: (work: Promise<unknown>) => void } | undefined,
): Promise<T> {
  if (!by) return work;
  by.defer(work.catch(() => undefined));
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("not settled within the resolve window")), Math.max(0, ms));
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

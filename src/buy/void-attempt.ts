import { sql } from "drizzle-orm";
import { withDb } from "../db/client";
import { enqueueVoid } from "../orders/enqueue-order";
import { settleRestore } from "../orders/order-lifecycle";
import { findOrder, transitionOrder } from "../orders/order-repository";
import type { LifecycleDeps } from "../services";
import type { QueuedOrder } from "../stock/queued-order";
import { type VoidOutcome, type VoidRequest, voidReservation } from "../stock/void";

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
    await recordVoided(deps, outcome.order as QueuedOrder);
  }
  return outcome;
}

/**
 * The buy route's last step for an attempt that got no reply within its window: the claimed order
 * when a keyed retry already took it (answered 202 as a replay), otherwise `voided` (answered 503),
 * after voiding it here or handing the void to QStash.
 */
export async function resolveUnanswered(
  deps: LifecycleDeps,
  req: VoidRequest,
): Promise<{ kind: "claimed"; order: QueuedOrder } | { kind: "voided" }> {
  try {
    const outcome = await voidAttempt(deps, req);
    if (outcome.kind === "claimed") return outcome;
    if (outcome.kind !== "not_initialised") return { kind: "voided" };
  } catch (error) {
    console.warn(`void of ${req.orderId} not settled in the request; handing it to QStash`, error);
  }
  try {
    await enqueueVoid(deps, req);
  } catch (error) {
    console.error(`void of ${req.orderId} could not be handed to QStash: it may stay reserved`, error);
  }
  return { kind: "voided" };
}

/** A voided reservation in Postgres: a cancelled order whose units are back (exactly once). */
async function recordVoided(deps: LifecycleDeps, order: QueuedOrder): Promise<void> {
  await insertCancelled(deps, order);
  const row =
    (await transitionOrder(deps.db, order.orderId, "cancelled", { publishTo: deps })) ??
    (await findOrder(deps.db, order.orderId));
  if (!row) return;
  if (row.status === "paid") {
    console.error(`voided reservation ${order.orderId} is paid in Postgres; left as it is`);
    return;
  }
  // the script wrote the "x:" entry: restore-stock.lua answers "already restored", Postgres records it
  await settleRestore(deps, row);
}

/** Inserts the order as cancelled unless a row exists (then nothing changes). */
async function insertCancelled(deps: LifecycleDeps, o: QueuedOrder): Promise<void> {
  const iso = (ms: number) => new Date(ms).toISOString();
  await withDb(() =>
    deps.db.execute(sql`
      with ins as (
        insert into orders (id, sale_id, user_id, quantity, status, created_at, expires_at, epoch, cancelled_at)
        select ${o.orderId}, s.id, ${o.userId}, ${o.quantity}, 'cancelled', ${iso(o.createdAt)}::timestamptz,
               ${iso(o.expiresAt)}::timestamptz, ${o.epoch}, now()
        from sales s where s.id = ${o.saleId}
        on conflict (id) do nothing
        returning id, sale_id
      )
      insert into order_events (order_id, sale_id, type)
      select id, sale_id, t.type from ins, (values ('written'), ('cancelled')) as t(type)
      on conflict do nothing`),
  );
}

/**
 * The waiting room's promises across a Redis loss, for the chaos scenario `room-loss`: every ticket a
 * shopper is shown (a join, a `queue/me` read, a stream's event) is noted with when it was asked for
 * and when it came ({@link TicketLog}, filled by {@link seenTickets}); the rules then hold what was shown
 * before Redis was lost against what was shown after the sale was rebuilt:
 *
 * - `ticket`: a shopper's ticket id never changes, and a ticket shown is never answered 404 NO_TICKET;
 * - `places`: once the line is sealed a ticket's position never changes; the frontier shown after the
 *   rebuild is never behind the one shown before the loss;
 * - `will_not_get`: a ticket once told `will_not_get` is never told anything else (the store state and
 *   the orders of those shoppers are judged by room-rules.ts with the same list);
 * - `admission`: an admission shown running at the loss is shown running after the rebuild (its end
 *   moved by the quiet period: time out, nobody may buy meanwhile) until it ends, and is never shown
 *   waiting again; an admission whose end fell before the rebuild began may lapse (the outage itself is
 *   not time out);
 * - `admitted-buy`: a buy such a shopper sent and was refused while the sale was lost or quiet (503,
 *   409 SALE_PAUSED), sent again after, gets its units unless the admission had ended by then; never a
 *   refusal for stock or the limit.
 */
import { type RoomShop, type Ticket, unitsOf, type Verdict } from "../bench/clients/room-shop";
import type { Op } from "./history";

export type LossViolation = { rule: string; detail: string };

/** One ticket as a shopper was shown it. `sentAt`: when it was asked for (a stream's event: when it came). */
export type Seen = {
  sentAt: number;
  at: number;
  via: "join" | "me" | "stream";
  ticketId: string;
  position: number;
  frontier: number;
  verdict: Verdict;
  /** an admission's end (ms), the units its token carries, the token */
  until?: number;
  units?: number;
  token?: string;
};

/** A lost ticket: a `queue/me` or stream answered 404 NO_TICKET to a shopper who had been shown one. */
export type Lost = { userId: string; at: number; via: string };

export class TicketLog {
  readonly byUser = new Map<string, Seen[]>();
  readonly lost: Lost[] = [];
  /** the latest admission noticed (for the scenario's choice of the moment to lose Redis) */
  lastAdmitted: { userId: string; at: number } | null = null;

  note(userId: string, t: Ticket, via: Seen["via"], sentAt: number): void {
    const at = Date.now();
    const seen: Seen = {
      sentAt,
      at,
      via,
      ticketId: t.ticketId,
      position: t.position,
      frontier: t.frontier,
      verdict: t.verdict,
    };
    if (t.admission) {
      seen.until = Date.parse(t.admission.expiresAt);
      seen.units = unitsOf(t.admission.token);
      seen.token = t.admission.token;
    }
    let list = this.byUser.get(userId);
    if (!list) {
      list = [];
      this.byUser.set(userId, list);
    }
    const first = t.verdict === "admitted" && !list.some((s) => s.verdict === "admitted");
    list.push(seen);
    if (first) this.lastAdmitted = { userId, at };
  }

  noteLost(userId: string, via: string): void {
    if (this.byUser.has(userId)) this.lost.push({ userId, at: Date.now(), via });
  }

  /** Users shown `will_not_get` in a ticket that came before `t`. */
  toldWillNotGet(before = Number.POSITIVE_INFINITY): string[] {
    const out: string[] = [];
    for (const [u, list] of this.byUser)
      if (list.some((s) => s.verdict === "will_not_get" && s.at < before)) out.push(u);
    return out;
  }

  /** Admissions shown before `t` whose end is after it: user -> the end, units and token last shown. */
  runningAt(t: number): Map<string, { until: number; units: number; token: string }> {
    const out = new Map<string, { until: number; units: number; token: string }>();
    for (const [u, list] of this.byUser) {
      const shown = list.filter((s) => s.at < t && s.verdict === "admitted" && s.until !== undefined);
      const last = shown.at(-1);
      if (last?.until !== undefined && last.until > t)
        out.set(u, { until: last.until, units: last.units ?? 1, token: last.token ?? "" });
    }
    return out;
  }

  /** Shoppers ever shown `admitted`. */
  admittedEver(): number {
    let n = 0;
    for (const list of this.byUser.values()) if (list.some((s) => s.verdict === "admitted")) n++;
    return n;
  }

  /** The latest end of an admission shown to `userId` (0: none shown). */
  endShown(userId: string): number {
    return Math.max(0, ...(this.byUser.get(userId) ?? []).map((s) => s.until ?? 0));
  }
}

/** The shop with every ticket it shows noted in `log` (and every 404 NO_TICKET to a ticket holder). */
export function seenTickets(shop: RoomShop, log: TicketLog): RoomShop {
  const note = async (userId: string, via: "join" | "me", call: () => ReturnType<RoomShop["me"]>) => {
    const sentAt = Date.now();
    const a = await call();
    if (a.body) log.note(userId, a.body, via, sentAt);
    else if (a.status === 404 && a.code === "NO_TICKET") log.noteLost(userId, via);
    return a;
  };
  return {
    ...shop,
    join: (u) => note(u, "join", () => shop.join(u)),
    me: (u) => note(u, "me", () => shop.me(u)),
    async watch(u, on, signal) {
      const status = await shop.watch(
        u,
        (t) => {
          log.note(u, t, "stream", Date.now());
          return on(t);
        },
        signal,
      );
      if (status === 404) log.noteLost(u, "stream");
      return status;
    },
  };
}

/** The loss as the scenario ran it: Redis restarted at `lostAt`; the rebuild's quiet period began at
 * `quietFrom` (the store's clock, from the rebuilt meta) and ended at `quietUntil`; `rebuiltAt`: when the
 * rebuilt sale was seen in Redis. */
export type LossTimes = { lostAt: number; quietFrom: number; quietUntil: number; rebuiltAt: number };

/** Margin for clocks and answers in flight (the store's clock and this process's are one machine's). */
const SLACK_MS = 300;
const FOR_STOCK = ["INSUFFICIENT_STOCK", "SOLD_OUT", "LIMIT_EXCEEDED", "ALREADY_PURCHASED"];

export type LossFigures = {
  /** tickets shown before the loss, and of those shown again after the rebuild, how many kept id and place */
  shownBefore: number;
  shownAgain: number;
  keptPlace: number;
  /** shoppers told will_not_get before the loss; of those shown again after, still will_not_get */
  willNotGetBefore: number;
  willNotGetShownAgain: number;
  willNotGetKept: number;
  /** admissions shown running at the loss; shown again after the rebuild; of those running then, with their end moved */
  runningAtLoss: number;
  runningShownAgain: number;
  moved: number;
  /** admissions whose end fell in the outage (before the quiet period began): allowed to lapse */
  endedInOutage: number;
  /** buys of admitted shoppers refused during the loss and sent again; those that got their units */
  buysRetried: number;
  buysRetriedGot: number;
  frontierBefore: number;
  frontierAfter: number | null;
};

/** Shoppers whose buy was refused while the sale was lost or quiet (503, 409 SALE_PAUSED): judged here. */
export function refusedDuringLoss(ops: Op[], loss: LossTimes): Set<string> {
  return new Set(
    ops
      .filter(
        (op) =>
          op.kind === "buy" &&
          op.invokedAt >= loss.lostAt - SLACK_MS &&
          op.invokedAt < loss.quietUntil + SLACK_MS &&
          (op.status === 503 || op.code === "SALE_PAUSED"),
      )
      .map((op) => op.userId),
  );
}

/** The rules above, on the tickets shown and the buys made (the scenario's history). */
export function judgeLoss(
  log: TicketLog,
  ops: Op[],
  loss: LossTimes,
): { violations: LossViolation[]; figures: LossFigures } {
  const v: LossViolation[] = [];
  const add = (rule: string, detail: string) => v.push({ rule, detail });
  const quietMs = loss.quietUntil - loss.quietFrom;
  const before = (s: Seen) => s.at < loss.lostAt;
  const after = (s: Seen) => s.sentAt >= loss.rebuiltAt;
  const f: LossFigures = {
    shownBefore: 0,
    shownAgain: 0,
    keptPlace: 0,
    willNotGetBefore: 0,
    willNotGetShownAgain: 0,
    willNotGetKept: 0,
    runningAtLoss: 0,
    runningShownAgain: 0,
    moved: 0,
    endedInOutage: 0,
    buysRetried: 0,
    buysRetriedGot: 0,
    frontierBefore: 0,
    frontierAfter: null,
  };
  const lostOnce = new Map<string, Lost>();
  for (const x of log.lost) if (!lostOnce.has(x.userId)) lostOnce.set(x.userId, x);
  for (const lost of lostOnce.values())
    add(
      "ticket",
      `${lost.userId}'s ticket answered 404 NO_TICKET (${lost.via}, ${lost.at - loss.lostAt} ms after the loss)`,
    );

  for (const [u, list] of log.byUser) {
    const ids = new Set(list.map((s) => s.ticketId));
    if (ids.size > 1) add("ticket", `${u} was shown ${ids.size} tickets: ${[...ids].join(", ")}`);
    // positions once sealed (a frontier shown): one, before and after
    const sealed = list.filter((s) => s.frontier > 0);
    const earlier = sealed.filter(before);
    const later = sealed.filter(after);
    if (earlier.length > 0) f.shownBefore++;
    if (earlier.length > 0 && later.length > 0) f.shownAgain++;
    const positions = new Set(sealed.map((s) => s.position));
    if (positions.size > 1) {
      const p = earlier.at(-1)?.position;
      const moved = later.find((s) => s.position !== p);
      add(
        "places",
        p !== undefined && moved
          ? `${u}: position ${p} before the loss, ${moved.position} after it (${moved.via})`
          : `${u} was shown positions ${[...positions].join(", ")}`,
      );
    } else if (earlier.length > 0 && later.length > 0 && ids.size === 1) f.keptPlace++;
    for (const s of list) {
      if (before(s)) f.frontierBefore = Math.max(f.frontierBefore, s.frontier);
      if (after(s)) f.frontierAfter = Math.min(f.frontierAfter ?? s.frontier, s.frontier);
    }
    // will_not_get is final
    const told = list.find((s) => s.verdict === "will_not_get");
    if (told) {
      const then = list.find((s) => s.sentAt > told.at && s.verdict !== "will_not_get");
      if (then)
        add(
          "will_not_get",
          `${u} told will_not_get ${told.at - loss.lostAt} ms from the loss, then ${then.verdict} ${then.at - loss.lostAt} ms from it (${then.via})`,
        );
      if (before(told)) {
        f.willNotGetBefore++;
        const again = list.filter(after);
        if (again.length > 0) f.willNotGetShownAgain++;
        if (again.length > 0 && again.every((s) => s.verdict === "will_not_get")) f.willNotGetKept++;
      }
    }
  }
  for (const s of [...log.byUser.values()].flat())
    if (after(s) && f.frontierAfter !== null && s.frontier < f.frontierBefore) {
      add(
        "places",
        `the frontier was ${f.frontierBefore} before the loss, ${s.frontier} after it (${s.via})`,
      );
      break;
    }

  // admissions running at the loss
  const running = log.runningAt(loss.lostAt);
  f.runningAtLoss = running.size;
  for (const [u, { until }] of running) {
    // an end after the quiet period's start moved by its length; one before it lapses (the outage is not time out)
    const movedEnd = until > loss.quietFrom ? until + quietMs : until;
    if (until <= loss.quietFrom) f.endedInOutage++;
    const again = (log.byUser.get(u) ?? []).filter(after);
    if (again.length > 0) f.runningShownAgain++;
    else
      add(
        "admission",
        `${u}, admitted until ${until - loss.lostAt} ms after the loss, was not shown its ticket after the rebuild`,
      );
    let sawMoved = false;
    for (const s of again) {
      if (s.verdict !== "admitted" && s.verdict !== "lapsed") {
        add(
          "admission",
          `${u}, admitted until ${until - loss.lostAt} ms after the loss, was shown ${s.verdict} after the rebuild (${s.via})`,
        );
        break;
      }
      if (s.verdict === "lapsed" && s.at < movedEnd - SLACK_MS) {
        add(
          "admission",
          `${u}'s admission, to end ${movedEnd - s.at} ms later, was shown lapsed after the rebuild (${s.via})`,
        );
        break;
      }
      if (s.verdict === "admitted" && (s.until ?? 0) < movedEnd - 5) {
        add(
          "admission",
          `${u}'s admission ends ${(s.until ?? 0) - movedEnd} ms from where it should after the rebuild (${s.via})`,
        );
        break;
      }
      if (s.verdict === "admitted" && until > loss.quietFrom) sawMoved = true;
    }
    if (sawMoved) f.moved++;
  }
  // buys refused while the sale was lost or quiet (503, 409 SALE_PAUSED) and sent again: the last gets
  // its units unless the admission (its end moved by the quiet period) had ended by then
  const refused = refusedDuringLoss(ops, loss);
  for (const u of refused) {
    const atLoss = running.get(u);
    const end = atLoss
      ? atLoss.until > loss.quietFrom
        ? atLoss.until + quietMs
        : atLoss.until
      : log.endShown(u);
    const last = ops.filter((op) => op.kind === "buy" && op.userId === u).at(-1) as Op;
    f.buysRetried++;
    if (last.status === 202) f.buysRetriedGot++;
    // an unanswered one is resolved by its order (room-rules.ts, the checker)
    else if (
      last.outcome !== "unknown" &&
      (FOR_STOCK.includes(last.code ?? "") || last.invokedAt < end - 2_000)
    )
      add(
        "admitted-buy",
        `${u}, refused during the loss, bought again ${end - last.invokedAt} ms before its admission's end: ${last.status} ${last.code ?? ""}`,
      );
  }
  return { violations: v, figures: f };
}

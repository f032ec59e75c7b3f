import { shopperToken } from "../../bench/clients/jwt";
import { crowdPlans, runCrowd, summarizeCrowd } from "../../bench/clients/room-crowd";
import { httpRoomShop, type RoomShop } from "../../bench/clients/room-shop";
import { Shopper, type ShopperPlan } from "../../bench/clients/room-shopper";
import { saleKeys } from "../../src/stock/keys";
import { startApp } from "../../test/support/app";
import { JWT_SECRET } from "../../test/support/shopper";
import { judgeLoss, type LossTimes, refusedDuringLoss, seenTickets, TicketLog } from "../room-loss-rules";
import { judgeRoom, sampleHolds } from "../room-rules";
import { type Scenario, type ScenarioContext, serverRuntime } from "../scenario";
import { recorded } from "./room-crowd";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const QUIET_SECONDS = 2;
/**
 * Admissions of 4 s (+ 3.5 s of grace) lapse and give their units back several times in the run, and
 * outlast the outage (Redis restarted, the sale rebuilt: a second or two), so the admissions running at
 * the loss are still running when the sale comes back.
 */
const vars = {
  ADMISSION_WINDOW_SECONDS: "4",
  BUY_RESOLVE_WINDOW_MS: "1500",
  RECOVERY_QUIET_SECONDS: String(QUIET_SECONDS),
  REALTIME_MAX_ORDER_STREAMS: "20000",
  REALTIME_MAX_TICKET_STREAMS: "20000",
};
const START_IN_MS = 3_000;
const LENGTH_MS = { ci: 24_000, full: 90_000 };
const CROWD = { ci: { users: 600, stock: 20 }, full: { users: 2_000, stock: 100 } };

/**
 * The room-crowd workload (bench/clients/room-crowd.ts: waiters join, watch, buy when admitted, pay,
 * cancel, walk away) in a queue sale, with Redis restarted empty mid-admission: after the start, once
 * some units are paid, while admissions run and an admitted shopper has yet to buy (QStash held a
 * moment before, so order writes are in flight). The sweep rebuilds the sale and its room from
 * Postgres (or the engine's own recovery, asked for by the requests it refused, first); then every shopper looks again (a page reloaded after the outage), every shopper told
 * `will_not_get` before the loss joins again (and shops if let in), a buy refused during the loss is
 * sent again, and the admitted shoppers who meant never to buy buy what they held.
 *
 * Judged by chaos/room-loss-rules.ts (tickets and places kept, the frontier not back, will_not_get
 * final, admissions running at the loss kept with their ends moved by the quiet period, their buys
 * served), chaos/room-rules.ts (nothing oversold, no unit to a will_not_get shopper, no unit held
 * twice) and the history checker (`redisRebuilt`: every acknowledged order accounted for).
 */
export const roomLoss: Scenario = {
  name: "room-loss",
  title: "A waiting room's crowd with Redis restarted empty mid-admission, rebuilt from Postgres",
  vars,
  sale: (size) => ({
    admission: "queue",
    stock: CROWD[size].stock,
    perUserLimit: 2,
    paymentWindowSeconds: 2,
    startsAt: new Date(Date.now() + START_IN_MS).toISOString(),
    endsAt: new Date(Date.now() + START_IN_MS + LENGTH_MS[size]).toISOString(),
  }),
  checkOptions: { redisRebuilt: true },
  start: async (v) => ({ app: await startApp({ runtime: serverRuntime(), vars: v }) }),
  clientTimeoutMs: 15_000,
  async run(ctx) {
    const { saleId, productToken } = ctx.sale;
    const startsAt = Date.parse(String(ctx.sale.startsAt));
    const endsAt = Date.parse(String(ctx.sale.endsAt));
    const deadline = endsAt + 2_000;
    const { users, stock } = CROWD[ctx.size];
    const tickets = new TicketLog();
    const seen = seenTickets(
      httpRoomShop({
        baseUrl: ctx.app.worker.url,
        saleId,
        productToken,
        tokenOf: (u) => shopperToken(JWT_SECRET, u, 6 * 3600),
        addressOf: (u) => `10.78.${Number(u.slice(1)) >> 8}.${Number(u.slice(1)) & 255}`,
      }),
      tickets,
    );
    const shop = buyingAgain(recorded(seen, ctx.history), tickets);
    const plans = crowdPlans({ users, seed: 23 });
    const planOf = new Map(plans.map((p) => [p.userId, p]));
    const holds = sampleHolds(() => ctx.app.redis, saleId);
    const started = Date.now();
    const stop = new AbortController();
    const timer = setTimeout(() => stop.abort(), deadline - Date.now());
    const [records, after] = await Promise.all([
      runCrowd(shop, plans, { joinConcurrency: ctx.ms(12, 24), maxStreams: ctx.ms(600, 3_000), deadline }),
      (async () => {
        // CI: in the first wave of admissions; the full run: once units came back and were offered again
        const moment = { minPaid: ctx.ms(1, stock / 2), minAdmitted: ctx.ms(0, stock / 2 + 1) };
        const loss = await loseRedis(ctx, tickets, { startsAt, endsAt, ...moment, planOf });
        return {
          loss,
          ...(await afterTheLoss(ctx, { shop, seen, tickets, loss, planOf, signal: stop.signal })),
        };
      })(),
    ]);
    clearTimeout(timer);
    await Promise.all(after.returning);
    const crowdMs = Date.now() - started;
    await ctx.app.drain();
    await ctx.app.api.admin("GET", `/sales/${saleId}/queue`);
    await sleep(500);
    const crowd = summarizeCrowd(records);
    const returned = summarizeCrowd(after.returners.map((s) => s.record));
    const ops = ctx.history.toJSON();
    const { loss } = after;
    const lossJudged = judgeLoss(tickets, ops, loss);
    // buys refused during the loss and sent again are judged by the loss's rules (their admission's end moved)
    const refusedThenRetried = refusedDuringLoss(ops, loss);
    const toldWillNotGet = new Set([
      ...crowd.willNotGet,
      ...returned.willNotGet,
      ...tickets.toldWillNotGet(),
    ]);
    const { violations, figures: f } = await judgeRoom(
      ctx.app,
      saleId,
      {
        ...crowd,
        willNotGet: [...toldWillNotGet],
        admitted: [...crowd.admitted, ...returned.admitted].filter((a) => !refusedThenRetried.has(a.userId)),
        problems: [...crowd.problems, ...returned.problems],
        problemCount: crowd.problemCount + returned.problemCount,
      },
      { now: Date.now(), endsAt, holds: await holds.stop() },
    );
    // a run that did not do what it is for proves nothing: every shopper gets a ticket, the loss comes
    // while admissions run
    const workload: { rule: string; detail: string }[] = [];
    if (crowd.told.none > users / 20)
      workload.push({
        rule: "workload",
        detail: `${crowd.told.none} of ${users} shoppers were never shown a ticket (joins answered ${JSON.stringify(crowd.joinAnswers)})`,
      });
    if (lossJudged.figures.runningAtLoss === 0)
      workload.push({ rule: "workload", detail: "no admission was shown running when Redis was lost" });
    report(ctx, [...violations, ...lossJudged.violations, ...workload]);
    // nobody may buy while the sale is lost or quiet
    const gap: Record<string, number> = {};
    for (const op of ops) {
      if (op.kind !== "buy" || op.completedAt === undefined) continue;
      if (op.invokedAt < loss.lostAt || op.completedAt > loss.quietUntil) continue;
      const answer = op.outcome === "unknown" ? "unknown" : `${op.status}${op.code ? ` ${op.code}` : ""}`;
      gap[answer] = (gap[answer] ?? 0) + 1;
      if (op.status === 202)
        ctx.violation(
          `loss: a 202 ${op.invokedAt - loss.lostAt} ms after Redis was lost, before the quiet period ended`,
        );
    }
    const l = lossJudged.figures;
    const b = f.admittedBuys;
    ctx.fault(
      `quiet period ${QUIET_SECONDS} s; buy answers from the loss until it ended: ${JSON.stringify(gap)}`,
    );
    ctx.fault(
      `across the loss: ${l.shownAgain}/${l.shownBefore} placed tickets shown again, ${l.keptPlace} with their id and place; ` +
        `will_not_get before the loss ${l.willNotGetBefore}, shown again ${l.willNotGetShownAgain}, still will_not_get ${l.willNotGetKept} ` +
        `(${after.returners.length} joined again: told ${JSON.stringify(returned.told)}); ` +
        `admissions running at the loss ${l.runningAtLoss} (${l.endedInOutage} ended in the outage), shown again ${l.runningShownAgain}, ends moved ${l.moved}; ` +
        `buys refused during the loss and sent again ${l.buysRetriedGot}/${l.buysRetried} got their units; ` +
        `never-buyers admitted at the loss who bought after it ${after.neverBought.got}/${after.neverBought.tried}; ` +
        `frontier ${l.frontierBefore} before, ${l.frontierAfter ?? "-"} after`,
    );
    ctx.fault(
      `${users} shoppers for ${f.stock} units in ${Math.round(crowdMs / 1000)} s (${crowd.streams} watching a stream); ` +
        `told ${JSON.stringify(crowd.told)}, ends ${JSON.stringify(crowd.ends)}; ${f.admissions} admissions held ${f.unitsOffered} units (${f.unitsOfferedAgain} offered again); ` +
        `admitted buys within the admission ${b.got}/${b.within} got their units (${b.unanswered} unanswered); ` +
        `orders ${JSON.stringify(f.orders)}, ${f.unitsPaid} units paid, ${f.remaining} left; frontier ${f.frontier}, cutoff ${f.cutoff}`,
    );
  },
};

/** The violations found, the first 20 of each rule and how many more (a lost room breaks every ticket's promise). */
function report(ctx: ScenarioContext, violations: { rule: string; detail: string }[]): void {
  const byRule = new Map<string, string[]>();
  for (const x of violations) byRule.set(x.rule, [...(byRule.get(x.rule) ?? []), x.detail]);
  for (const [rule, details] of byRule) {
    for (const d of details.slice(0, 20)) ctx.violation(`${rule}: ${d}`);
    if (details.length > 20) ctx.violation(`${rule}: … ${details.length - 20} more`);
  }
}

/**
 * A buy refused while the sale is lost or in its quiet period (503, 409 SALE_PAUSED) is sent again, as a
 * shopper's page would, until the admission's end shown (moved by a quiet period) has passed.
 */
function buyingAgain(shop: RoomShop, tickets: TicketLog): RoomShop {
  return {
    ...shop,
    async buy(userId, quantity, admission) {
      for (;;) {
        const a = await shop.buy(userId, quantity, admission);
        const refusedForNow = a.status === 503 || a.code === "SALE_PAUSED";
        if (!refusedForNow || Date.now() > tickets.endShown(userId) + QUIET_SECONDS * 1000 + 1_000) return a;
        await sleep(Math.min(a.retryAfterMs ?? 300, 1_000));
      }
    },
  };
}

type Moment = {
  startsAt: number;
  endsAt: number;
  /** units paid, and shoppers ever admitted, before the loss */
  minPaid: number;
  minAdmitted: number;
  planOf: Map<string, ShopperPlan>;
};

/**
 * Waits for mid-admission (after the start, units paid, two admissions shown running that outlast the
 * outage, one of them to a shopper who will buy and has not yet; in the full run half the units paid and
 * admissions given beyond the first wave: or a third of the sale gone), holds
 * QStash a moment (order writes in flight), restarts Redis empty and runs the sweep until the sale is
 * back. The loss's times, the quiet period's from the rebuilt meta.
 */
async function loseRedis(ctx: ScenarioContext, tickets: TicketLog, m: Moment): Promise<LossTimes> {
  const { app, sale } = ctx;
  const k = saleKeys(sale.saleId);
  const latest = m.startsAt + (m.endsAt - m.startsAt) / 3;
  const paidUnits = async () =>
    Number(
      (
        await app.db.query<{ n: string }>(
          "select coalesce(sum(quantity), 0) as n from orders where sale_id = $1 and status = 'paid'",
          [sale.saleId],
        )
      ).rows[0]?.n ?? 0,
    );
  const yetToBuy = (running: string[]) => {
    const bought = new Set(ctx.history.ops.filter((op) => op.kind === "buy").map((op) => op.userId));
    return running.filter((u) => !bought.has(u) && m.planOf.get(u)?.intent !== "never");
  };
  for (;;) {
    const now = Date.now();
    if (now > latest) break;
    const running = [...tickets.runningAt(now + 2_000).keys()];
    if (
      running.length >= 2 &&
      yetToBuy(running).length > 0 &&
      tickets.admittedEver() >= m.minAdmitted &&
      (await paidUnits()) >= m.minPaid
    )
      break;
    await sleep(25);
  }
  app.stack.qstash.pause();
  await sleep(150);
  const [inFlight, paid] = await Promise.all([app.redis.hlen(k.orders), paidUnits()]);
  const lostAt = Date.now();
  const running = [...tickets.runningAt(lostAt).keys()];
  await app.stack.redis.restart({ empty: true });
  await app.reconnect();
  ctx.fault(
    `Redis restarted empty ${lostAt - m.startsAt} ms after the start: ${paid} units paid, ${tickets.admittedEver()} shoppers admitted, ${running.length} admissions shown running ` +
      `(${yetToBuy(running).length} of shoppers yet to buy), ${inFlight} order writes in flight`,
  );
  await sleep(300);
  // the sweep (the minute's cron, sooner), unless the engine's own recovery (asked for by the requests
  // it refused) got there first
  let nextSweep = 0;
  let sweeps = 0;
  const until = Date.now() + 30_000;
  while (!(await app.redis.hget(k.meta, "epoch").catch(() => null))) {
    if (Date.now() > until) throw new Error("the sale was not rebuilt within 30 s");
    if (Date.now() >= nextSweep) {
      nextSweep = Date.now() + 2_000;
      sweeps++;
      await app.worker.scheduled().catch(() => {});
    } else await sleep(50);
  }
  const rebuiltAt = Date.now();
  app.stack.qstash.resume();
  const quietUntil = Number(await app.redis.hget(k.meta, "recoveringUntil"));
  ctx.fault(
    `rebuilt ${rebuiltAt - lostAt} ms after the loss, ${sweeps > 0 ? `${sweeps} sweep(s) run` : "by the engine before any sweep"}`,
  );
  return { lostAt, rebuiltAt, quietFrom: quietUntil - QUIET_SECONDS * 1000, quietUntil };
}

/**
 * Once the quiet period is over: the admitted shoppers who meant never to buy, whose admission runs
 * on, buy what they held with the token they were given before the loss; every shopper who had a
 * ticket and was not told will_not_get looks once (`queue/me`, as a page reloaded after the outage);
 * every one told will_not_get joins again and shops if let in.
 */
async function afterTheLoss(
  ctx: ScenarioContext,
  o: {
    shop: RoomShop;
    seen: RoomShop;
    tickets: TicketLog;
    loss: LossTimes;
    planOf: Map<string, ShopperPlan>;
    signal: AbortSignal;
  },
) {
  const { tickets, loss } = o;
  await sleep(Math.max(0, loss.quietUntil - Date.now()) + 300);
  const neverBought = { tried: 0, got: 0 };
  const quietMs = loss.quietUntil - loss.quietFrom;
  const never = [...tickets.runningAt(loss.lostAt)].filter(([u]) => o.planOf.get(u)?.intent === "never");
  await inParallel(never, 8, async ([u, a]) => {
    const end = a.until > loss.quietFrom ? a.until + quietMs : a.until;
    if (end < Date.now() + 1_500) return;
    neverBought.tried++;
    const bought = await o.shop.buy(u, a.units, a.token);
    if (bought.status === 202) neverBought.got++;
    // unanswered: its order, if any, is judged by the checker
    else if (bought.status !== 0)
      ctx.violation(
        `admission: ${u}, admitted at the loss, bought ${a.units} after it, ${end - Date.now()} ms before its end: ${bought.status} ${bought.code ?? ""}`,
      );
  });
  const told = new Set(tickets.toldWillNotGet(loss.lostAt));
  const others = [...tickets.byUser.keys()].filter((u) => !told.has(u));
  await inParallel(others, 16, async (u) => {
    // a look refused for now (a loaded machine) is tried again: only an answer counts
    for (let attempt = 0; attempt < 4; attempt++) {
      const a = await o.seen.me(u);
      if (a.status === 200 || a.status === 404) return;
      await sleep(500);
    }
  });
  const returners = [...told].map(
    (userId) => new Shopper(o.shop, { userId, intent: "pay", stream: false, quantity: 1, delayMs: 0 }),
  );
  const returning: Promise<void>[] = [];
  await inParallel(returners, 16, async (s) => {
    if (await s.join(o.signal)) returning.push(s.live(o.signal, () => false));
  });
  return { returners, returning, neverBought };
}

async function inParallel<T>(items: T[], width: number, each: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await each(items[next++] as T);
    }),
  );
}

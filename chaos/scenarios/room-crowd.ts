import { shopperToken } from "../../bench/clients/jwt";
import { crowdPlans, runCrowd, summarizeCrowd } from "../../bench/clients/room-crowd";
import { httpRoomShop, type RoomShop } from "../../bench/clients/room-shop";
import { startApp } from "../../test/support/app";
import { JWT_SECRET } from "../../test/support/shopper";
import { classify, type History, type OpKind } from "../history";
import { judgeRoom, sampleHolds } from "../room-rules";
import { type Scenario, serverRuntime } from "../scenario";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Short windows, so that lapses, cancels and expiries come back (and go out again) within the run. */
const vars = {
  ADMISSION_WINDOW_SECONDS: "2",
  BUY_RESOLVE_WINDOW_MS: "1500",
  REALTIME_MAX_ORDER_STREAMS: "20000",
  REALTIME_MAX_TICKET_STREAMS: "20000",
};
const START_IN_MS = 3_000;
const LENGTH_MS = { ci: 24_000, full: 150_000 };

/**
 * A crowd in a queue sale's waiting room (bench/clients/room-crowd.ts): 800 shoppers for 20 units at
 * CI size, 20,000 for 300 in the full run, some joining before the start (shuffled at the seal). They
 * watch (a stream, or polling `queue/me`), buy with their admissions, pay, cancel, let orders expire
 * unpaid, or never buy, so units come back and are offered again. Judged by chaos/room-rules.ts beside
 * the history checker: nothing oversold, nobody told will_not_get gets a unit, every admitted buy
 * within its admission gets its units, places never move and the frontier never goes back, no unit
 * held by two admissions at once, none left while waiters within the cutoff remain.
 */
export const roomCrowd: Scenario = {
  name: "room-crowd",
  title: "A crowd in a queue sale's waiting room: returned units offered again, will_not_get final",
  vars,
  sale: (size) => ({
    admission: "queue",
    stock: size === "ci" ? 20 : 300,
    perUserLimit: 2,
    paymentWindowSeconds: 2,
    startsAt: new Date(Date.now() + START_IN_MS).toISOString(),
    endsAt: new Date(Date.now() + START_IN_MS + LENGTH_MS[size]).toISOString(),
  }),
  start: async (v) => ({ app: await startApp({ runtime: serverRuntime(), vars: v }) }),
  clientTimeoutMs: 15_000,
  async run(ctx) {
    const { saleId, productToken } = ctx.sale;
    const endsAt = Date.parse(String(ctx.sale.endsAt));
    const shop = recorded(
      httpRoomShop({
        baseUrl: ctx.app.worker.url,
        saleId,
        productToken,
        tokenOf: (u) => shopperToken(JWT_SECRET, u, 6 * 3600),
        addressOf: (u) => `10.77.${Number(u.slice(1)) >> 8}.${Number(u.slice(1)) & 255}`,
      }),
      ctx.history,
    );
    const users = ctx.ms(800, 20_000);
    const holds = sampleHolds(ctx.app.redis, saleId);
    const started = Date.now();
    const records = await runCrowd(shop, crowdPlans({ users, seed: 19 }), {
      joinConcurrency: ctx.ms(12, 24),
      maxStreams: ctx.ms(600, 3_000),
      deadline: endsAt + 2_000,
    });
    const crowdMs = Date.now() - started;
    await ctx.app.drain();
    await ctx.app.api.admin("GET", `/sales/${saleId}/queue`);
    await sleep(500);
    const crowd = summarizeCrowd(records);
    const { violations, figures: f } = await judgeRoom(ctx.app, saleId, crowd, {
      now: Date.now(),
      endsAt,
      holds: await holds.stop(),
    });
    for (const x of violations) ctx.violation(`${x.rule}: ${x.detail}`);
    const b = f.admittedBuys;
    ctx.fault(
      `${users} shoppers for ${f.stock} units in ${Math.round(crowdMs / 1000)} s (${crowd.streams} watching a stream, the rest polling); ` +
        `told ${JSON.stringify(crowd.told)}; ${f.admissions} admissions held ${f.unitsOffered} units (${f.unitsOfferedAgain} offered again after coming back); ` +
        `admitted buys within the admission ${b.got}/${b.within} got their units (${b.unanswered} unanswered) (after will_get ${b.afterWillGetGot}/${b.afterWillGet}); ` +
        `orders ${JSON.stringify(f.orders)}, ${f.unitsPaid} units paid, ${f.remaining} left; frontier ${f.frontier}, cutoff ${f.cutoff}`,
    );
  },
};

/** The shop with its buys, payments and cancels written into the run's history (the checker's input). */
export function recorded(shop: RoomShop, history: History): RoomShop {
  const note = <T extends { status: number; code?: string }>(
    kind: OpKind,
    op: ReturnType<History["invoke"]>,
    a: T,
    orderId?: string,
  ) =>
    history.complete(op, {
      outcome: a.status === 0 ? "unknown" : classify(kind, a.status),
      status: a.status,
      ...(a.code ? { code: a.code } : {}),
      ...(orderId ? { orderId } : {}),
    });
  return {
    ...shop,
    async buy(userId, quantity, admission) {
      const op = history.invoke({ kind: "buy", userId, quantity });
      const a = await shop.buy(userId, quantity, admission);
      note("buy", op, a, a.body?.orderId);
      return a;
    },
    async act(action, orderId, userId) {
      const op = history.invoke({ kind: action, userId, orderId });
      const a = await shop.act(action, orderId, userId);
      const done = note(action, op, a);
      if (a.body?.status) done.orderStatus = a.body.status;
      return a;
    },
  };
}

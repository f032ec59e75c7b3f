/**
 * One shopper in a queue sale's waiting room, as people behave: joins, then watches its ticket (a
 * stream, or polling `queue/me` as often as its estimated wait suggests) until it is admitted or told
 * `will_not_get`; once admitted, buys with the `Admission` header and pays, or cancels, or lets the
 * order expire unpaid, or never buys at all (its admission lapses and the units go to the next).
 * Everything it is told is checked as it arrives: its place never changes once the line is sealed, the
 * frontier never goes back, `will_not_get` is final, and an admitted buy within the admission succeeds.
 */
import { type RoomShop, type Ticket, unitsOf, type Verdict } from "./room-shop";

export type Intent = "pay" | "cancel" | "expire" | "never";

export type ShopperPlan = {
  userId: string;
  intent: Intent;
  stream: boolean;
  quantity: number;
  delayMs: number;
};

export type ShopperRecord = {
  userId: string;
  intent: Intent;
  stream: boolean;
  told: Verdict[];
  /** the place once the line was sealed */
  position: number | null;
  admission?: { units: number; until: number; seenAt: number };
  buy?: { status: number; code?: string; sentAt: number; quantity: number; afterWillGet: boolean };
  action?: { kind: "pay" | "cancel"; status: number; code?: string };
  end: "will_not_get" | "lapsed" | "acted" | "left" | "waiting" | "join_failed";
  /** the join's answers (a 429 or 503 is tried again) and how long until the ticket came */
  joins: number[];
  joinMs: number;
  problems: string[];
};

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    const early = () => {
      clearTimeout(t);
      resolve();
    };
    signal?.addEventListener("abort", early, { once: true });
  });

export class Shopper {
  readonly record: ShopperRecord;
  private frontier = 0;
  constructor(
    private readonly shop: RoomShop,
    private readonly plan: ShopperPlan,
  ) {
    const { userId, intent, stream } = plan;
    this.record = {
      userId,
      intent,
      stream,
      told: [],
      position: null,
      end: "waiting",
      joins: [],
      joinMs: 0,
      problems: [],
    };
  }

  /** Joins (again after a 429 or 503, as told); false when it never got a ticket. */
  async join(signal: AbortSignal): Promise<boolean> {
    const started = Date.now();
    for (let attempt = 0; attempt < 6 && !signal.aborted; attempt++) {
      const a = await this.shop.join(this.plan.userId);
      this.record.joins.push(a.status);
      this.record.joinMs = Date.now() - started;
      if (a.body) return this.see(a.body, "join");
      if (a.status !== 0 && a.status !== 429 && a.status !== 503) break;
      await sleep(a.retryAfterMs ?? 1_000, signal);
    }
    this.record.end = "join_failed";
    return false;
  }

  /** Watches until admitted (then acts), told will_not_get, lapsed, or stopped. */
  async live(signal: AbortSignal, streamsFree: () => boolean): Promise<void> {
    let last = this.lastTicket;
    while (!signal.aborted && last && this.waiting(last.verdict)) {
      if (this.plan.stream && streamsFree()) {
        const controller = new AbortController();
        const stop = () => controller.abort();
        signal.addEventListener("abort", stop, { once: true });
        await this.shop.watch(
          this.plan.userId,
          (t) => this.see(t, "stream") && this.waiting(t.verdict),
          controller.signal,
        );
        signal.removeEventListener("abort", stop);
        last = this.lastTicket;
        if (last && this.waiting(last.verdict)) await sleep(1_000, signal);
      } else {
        const wait =
          last.verdict === "will_get" ? 500 : Math.min(10, Math.max(1, last.estimatedWaitSeconds / 3));
        await sleep(wait * 1000 * (0.75 + Math.random() / 2), signal);
        const a = await this.shop.me(this.plan.userId);
        if (a.body) this.see(a.body, "me");
        else if (a.retryAfterMs) await sleep(a.retryAfterMs, signal);
      }
      last = this.lastTicket;
    }
    if (!last || signal.aborted) return;
    if (last.verdict === "admitted" && last.admission) await this.act(last.admission.token, signal);
    else this.record.end = last.verdict === "lapsed" ? "lapsed" : "will_not_get";
  }

  private lastTicket: Ticket | null = null;
  private waiting = (v: Verdict) => v === "may_get" || v === "will_get";

  /** Notes a ticket and checks it against what came before; true (a stream goes on while it waits). */
  private see(t: Ticket, via: string): true {
    const r = this.record;
    const before = r.told.at(-1);
    if (r.told.at(-1) !== t.verdict) r.told.push(t.verdict);
    if (t.frontier < this.frontier)
      r.problems.push(`frontier went back ${this.frontier} → ${t.frontier} (${via})`);
    this.frontier = Math.max(this.frontier, t.frontier);
    if (t.frontier > 0) {
      if (r.position === null) r.position = t.position;
      else if (r.position !== t.position)
        r.problems.push(`position moved ${r.position} → ${t.position} (${via})`);
    }
    if (before === "will_not_get" && t.verdict !== "will_not_get")
      r.problems.push(`told will_not_get, then ${t.verdict} (${via})`);
    if ((before === "admitted" || before === "lapsed") && this.waiting(t.verdict))
      r.problems.push(`told ${before}, then ${t.verdict} (${via})`);
    if (t.verdict === "admitted" && t.admission && !r.admission)
      r.admission = {
        units: unitsOf(t.admission.token),
        until: Date.parse(t.admission.expiresAt),
        seenAt: Date.now(),
      };
    this.lastTicket = t;
    return true;
  }

  /** The admitted shopper's choice: buy (then pay, cancel or walk away), or never buy. */
  private async act(token: string, signal: AbortSignal): Promise<void> {
    const r = this.record;
    r.end = "acted";
    if (this.plan.intent === "never") return;
    await sleep(this.plan.delayMs, signal);
    const quantity = Math.min(this.plan.quantity, r.admission?.units ?? 1);
    const sentAt = Date.now();
    const bought = await this.shop.buy(this.plan.userId, quantity, token);
    r.buy = {
      status: bought.status,
      sentAt,
      quantity,
      afterWillGet: r.told.includes("will_get"),
      ...(bought.code ? { code: bought.code } : {}),
    };
    const orderId = bought.body?.orderId;
    if (!orderId || this.plan.intent === "expire") return;
    const kind = this.plan.intent === "cancel" ? "cancel" : "pay";
    for (let attempt = 0; attempt < 20; attempt++) {
      const a = await this.shop.act(kind, orderId, this.plan.userId);
      r.action = { kind, status: a.status, ...(a.code ? { code: a.code } : {}) };
      if (
        a.status === 200 ||
        (a.status >= 400 && a.status < 500 && a.code !== "ORDER_NOT_READY" && a.status !== 429)
      )
        return;
      await sleep(a.retryAfterMs ?? 300);
    }
  }
}

/**
 * The waiting room's rules, judged on a crowd's summary (bench/clients/room-crowd.ts) and on the stores
 * read directly, for the chaos scenario `room-crowd` and the bench's crowd phase:
 *
 * - `oversold`: units in live orders (Postgres) above the stock, or Redis' remaining below zero;
 * - `will_not_get`: a shopper once told `will_not_get` holds a unit (Redis holdings), has an order
 *   (Postgres) or was admitted (its ticket);
 * - `admitted-buy`: an admitted shopper's buy got no unit though it was refused for stock or the limit,
 *   or sent 3 s or more before its admission's end (admissions hold units: every buy that arrives
 *   within its admission gets them; one sent in the last seconds may arrive after the end, by design);
 * - `places`: a place moved after the seal, the frontier went back, or a final verdict changed, as the
 *   shoppers saw them;
 * - `offered-twice`: at a sampled moment, the units running admissions hold (each its units minus what
 *   its shopper holds in live orders) exceeded what remains (two admissions counting on one unit);
 * - `not-offered`: at rest, before the end, units remain while waiting tickets within the cutoff remain.
 */
import type { Redis } from "ioredis";
import type pg from "pg";
import type { CrowdSummary } from "../bench/clients/room-crowd";
import { saleKeys } from "../src/stock/keys";

export type RoomViolation = { rule: string; detail: string };

/** The units running admissions still hold against what remains, in one atomic read (nothing while the
 * sale is not in Redis: lost, or being rebuilt). */
const HOLDS = `
if redis.call("EXISTS", KEYS[4]) == 0 then return {0, 0, 0, 0} end
local users = redis.call("ZRANGE", KEYS[1], 0, -1)
local held = 0
for i = 1, #users, 500 do
  local chunk = {unpack(users, i, math.min(#users, i + 499))}
  local t = redis.call("HMGET", KEYS[2], unpack(chunk))
  local b = redis.call("HMGET", KEYS[3], unpack(chunk))
  for j = 1, #chunk do
    local h = cjson.decode(t[j]).h
    local n = tonumber(b[j] or "0")
    if h > n then held = held + h - n end
  end
end
return {held, tonumber(redis.call("GET", KEYS[4]) or "0"), #users, 1}`;

export type HoldSamples = { samples: number; maxHeld: number; violations: RoomViolation[] };

/**
 * Samples the holds every `everyMs` until `stop()`: each sample must have held ≤ remaining. `redis` may
 * be a getter, for a connection reopened after Redis restarted (the sale absent meanwhile is not
 * sampled, nor a read left unanswered for 2 s).
 */
export function sampleHolds(
  redis: Redis | (() => Redis),
  saleId: string,
  everyMs = 250,
): { stop(): Promise<HoldSamples> } {
  const connection = typeof redis === "function" ? redis : () => redis;
  const k = saleKeys(saleId);
  const out: HoldSamples = { samples: 0, maxHeld: 0, violations: [] };
  let running = true;
  const loop = (async () => {
    while (running) {
      // a command sent while Redis restarts may never be answered (a connection given up meanwhile)
      let timer: ReturnType<typeof setTimeout> | undefined;
      const [held, remaining, active, present] = ((await Promise.race([
        connection().eval(HOLDS, 4, k.active, k.tickets, k.holdings, k.stock),
        new Promise((r) => {
          timer = setTimeout(r, 2_000);
        }),
      ])
        .catch(() => null)
        .finally(() => clearTimeout(timer))) as number[] | null) ?? [0, 0, 0, 0];
      if (present) out.samples++;
      out.maxHeld = Math.max(out.maxHeld, held ?? 0);
      if ((held ?? 0) > (remaining ?? 0) && out.violations.length < 20)
        out.violations.push({
          rule: "offered-twice",
          detail: `${active} running admissions hold ${held} units, ${remaining} remain`,
        });
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return out;
    },
  };
}

export type RoomFigures = {
  stock: number;
  remaining: number;
  tickets: number;
  frontier: number;
  cutoff: number | null;
  admissions: number;
  unitsOffered: number;
  unitsOfferedAgain: number;
  unitsPaid: number;
  liveUnits: number;
  orders: Record<string, number>;
  /** admitted buys sent before the admission's end, those that got their units (a 202, or an order
   * behind an unanswered one), the unanswered, and the same for shoppers told will_get first */
  admittedBuys: {
    within: number;
    got: number;
    unanswered: number;
    /** their answers, by status and code */
    answers: Record<string, number>;
    afterWillGet: number;
    afterWillGetGot: number;
  };
};

/** The rules on the crowd's summary and the stores at rest (QStash drained, the room stepped once more). */
export async function judgeRoom(
  stores: { redis: Redis; db: pg.Pool },
  saleId: string,
  crowd: CrowdSummary,
  at: { now: number; endsAt: number; holds: HoldSamples },
): Promise<{ violations: RoomViolation[]; figures: RoomFigures }> {
  const v: RoomViolation[] = [...at.holds.violations];
  const k = saleKeys(saleId);
  const { redis, db } = stores;
  const [meta, remainingText, room, line] = await Promise.all([
    redis.hget(k.meta, "stock"),
    redis.get(k.stock),
    redis.hmget(k.room, "frontier", "cutoff", "count"),
    redis.llen(k.line),
  ]);
  const stock = Number(meta ?? 0);
  const remaining = Number(remainingText ?? 0);
  const frontier = Number(room[0] ?? 0);
  const cutoff = room[1] === null || Number(room[1]) < 0 ? null : Number(room[1]);
  const { rows } = await db.query<{ status: string; orders: string; units: string }>(
    "select status, count(*) as orders, coalesce(sum(quantity), 0) as units from orders where sale_id = $1 group by status",
    [saleId],
  );
  const orders = Object.fromEntries(rows.map((r) => [r.status, Number(r.orders)]));
  const unitsOf = (s: string) => Number(rows.find((r) => r.status === s)?.units ?? 0);
  const liveUnits = unitsOf("awaiting_payment") + unitsOf("paid") + unitsOf("queued");
  if (liveUnits > stock)
    v.push({ rule: "oversold", detail: `${liveUnits} units in live orders, stock ${stock}` });
  if (remaining < 0) v.push({ rule: "oversold", detail: `remaining ${remaining}` });

  const told = crowd.willNotGet;
  for (let i = 0; i < told.length; i += 1000) {
    const chunk = told.slice(i, i + 1000);
    const [held, tickets] = await Promise.all([
      redis.hmget(k.holdings, ...chunk),
      redis.hmget(k.tickets, ...chunk),
    ]);
    chunk.forEach((u, j) => {
      if (Number(held[j] ?? 0) > 0) v.push({ rule: "will_not_get", detail: `${u} holds ${held[j]} units` });
      const s = tickets[j] ? (JSON.parse(tickets[j] as string) as { s: string }).s : "w";
      if (s !== "w") v.push({ rule: "will_not_get", detail: `${u}'s ticket was admitted (${s})` });
    });
  }
  const bought = await db.query<{ user_id: string; n: string }>(
    "select user_id, count(*) as n from orders where sale_id = $1 and user_id = any($2) group by user_id",
    [saleId, told],
  );
  for (const r of bought.rows) v.push({ rule: "will_not_get", detail: `${r.user_id} has ${r.n} order(s)` });

  // a buy that got no answer (a timeout) may have reserved: its order says
  const asked = crowd.admitted.filter((a) => a.buy && a.buy.status === 0).map((a) => a.userId);
  const ordered = new Set(
    (
      await db.query<{ user_id: string }>(
        "select distinct user_id from orders where sale_id = $1 and user_id = any($2)",
        [saleId, asked],
      )
    ).rows.map((r) => r.user_id),
  );
  const buys = {
    within: 0,
    got: 0,
    unanswered: asked.length,
    afterWillGet: 0,
    afterWillGetGot: 0,
    answers: {} as Record<string, number>,
  };
  for (const a of crowd.admitted) {
    if (!a.buy || a.buy.sentAt >= a.until) continue;
    buys.within++;
    const got = a.buy.status === 202 || (a.buy.status === 0 && ordered.has(a.userId));
    if (got) buys.got++;
    if (a.buy.afterWillGet) buys.afterWillGet++;
    if (a.buy.afterWillGet && got) buys.afterWillGetGot++;
    const answer = `${a.buy.status}${a.buy.code ? ` ${a.buy.code}` : ""}`;
    buys.answers[answer] = (buys.answers[answer] ?? 0) + 1;
    // the token's end is checked when the buy arrives: one sent in the admission's last seconds may
    // arrive after it (NOT_ADMITTED, by design), under a crowd that slows answers to a second or more;
    // a refusal for stock or the limit, or one sent earlier, is a broken promise
    const forStock = ["INSUFFICIENT_STOCK", "SOLD_OUT", "LIMIT_EXCEEDED", "ALREADY_PURCHASED"];
    if (!got && (forStock.includes(a.buy.code ?? "") || a.buy.sentAt < a.until - 3_000))
      v.push({
        rule: "admitted-buy",
        detail: `${a.userId} bought ${a.buy.quantity} of ${a.units} held, ${a.until - a.buy.sentAt} ms before the end: ${a.buy.status} ${a.buy.code ?? ""}`,
      });
  }
  for (const p of crowd.problems) v.push({ rule: "places", detail: p });
  if (crowd.problemCount > crowd.problems.length)
    v.push({ rule: "places", detail: `… ${crowd.problemCount - crowd.problems.length} more` });

  let admissions = 0;
  let unitsOffered = 0;
  for (let cursor = "0", first = true; first || cursor !== "0"; first = false) {
    const [next, flat] = await redis.hscan(k.tickets, cursor, "COUNT", 5000);
    cursor = next;
    for (let i = 1; i < flat.length; i += 2) {
      const t = JSON.parse(flat[i] as string) as { s: string; h: number };
      if (t.s !== "w") {
        admissions++;
        unitsOffered += t.h;
      }
    }
  }
  const reach = Math.min(line, cutoff ?? line);
  if (at.now < at.endsAt && remaining > 0 && frontier < reach)
    v.push({
      rule: "not-offered",
      detail: `${remaining} units left at rest while ${reach - frontier} waiting tickets are within the cutoff`,
    });
  return {
    violations: v,
    figures: {
      stock,
      remaining,
      tickets: Number(room[2] ?? 0),
      frontier,
      cutoff,
      admissions,
      unitsOffered,
      unitsOfferedAgain: Math.max(0, unitsOffered - stock),
      unitsPaid: unitsOf("paid"),
      liveUnits,
      orders,
      admittedBuys: buys,
    },
  };
}

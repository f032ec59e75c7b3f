import type { Redis } from "ioredis";
import { beforeEach, describe, expect, it } from "vitest";
import { saleKeys } from "../../../src/stock/keys";
import { openRoomKeys } from "../../../src/stock/open-room";
import { pauseKeys } from "../../../src/stock/pause";
import { reserveScriptCall } from "../../../src/stock/reserve-call";
import type { StoredTicket } from "../../../src/stock/room-step";
import { roomStepKeys } from "../../../src/stock/room-step";
import { initSale, lua, restore, sealRoom } from "../../support/lua";
import { redisServerForFile } from "../../support/redis-per-file";

/*
 * The waiting room's scripts (room-step, room-line, room-seal) driven against a real redis-server
 * with the KEYS/ARGV layouts of src/stock/queue-*.ts, together with the buy (reserve-stock.lua with an
 * admission's units, ARGV[12]) and the operator's adjustment: the promises of README "Admission".
 */

let redis: Redis;
const t0 = 1_800_000_000_000;
const WINDOW = 120_000;
const GRACE = 10_000;
let saleId = "";
let n = 0;

redisServerForFile((connection) => {
  redis = connection;
});
beforeEach(() => {
  saleId = `s${Math.random().toString(36).slice(2, 13).padEnd(11, "0")}`;
});

async function queueSale(o: { stock: number; perUserLimit: number; startsAt?: number; endsAt?: number }) {
  await initSale(redis, saleId, {
    stock: o.stock,
    perUserLimit: o.perUserLimit,
    startsAt: o.startsAt ?? t0,
    endsAt: o.endsAt ?? t0 + 3_600_000,
  });
  await redis.hset(saleKeys(saleId).meta, "admission", "queue");
  await redis.hset(saleKeys(saleId).room, "seed", "ab".repeat(32), "seedHash", "x");
}

type Step = {
  code: number;
  ticket: StoredTicket | null;
  frontier: number;
  cutoff: number;
  free: number;
  held: number;
  remaining: number;
};

/** room-step.lua with src/stock/room-step.ts's layout; `paid` makes it a tick (lapses, count, cutoff). */
async function step(now: number, o: { join?: string; read?: string; paid?: number } = {}): Promise<Step> {
  const keys = roomStepKeys(saleId);
  const args = [now, o.join ?? "", `t-${o.join ?? ""}`, WINDOW, GRACE, o.paid ?? -1, o.read ?? o.join ?? ""];
  const r = (await redis.eval(lua("room-step"), keys.length, ...keys, ...args.map(String))) as (
    | string
    | number
  )[];
  const ticket = typeof r[1] === "string" && r[1] !== "" ? (JSON.parse(r[1]) as StoredTicket) : null;
  return {
    code: Number(r[0]),
    ticket,
    frontier: Number(r[2]),
    cutoff: Number(r[3]),
    free: Number(r[4]),
    held: Number(r[5]),
    remaining: Number(r[6]),
  };
}

/** The seal as src/room/room.ts does it (test/support/lua.ts). */
const seal = (now: number) => sealRoom(redis, saleId, now);

async function ticketOf(userId: string): Promise<StoredTicket> {
  return JSON.parse((await redis.hget(saleKeys(saleId).tickets, userId)) ?? "null") as StoredTicket;
}

/** A buy with the admission's units (reserve-stock.lua ARGV[12]), as src/buy/attempt.ts runs it. */
async function buy(userId: string, quantity: number, now: number, admittedUnits: number) {
  const { keys, args } = reserveScriptCall(
    {
      saleId,
      orderId: `o${++n}`,
      userId,
      ip: "127.0.0.1",
      quantity,
      idempotencyKey: null,
      now,
      admittedUnits,
    },
    { userPerWindow: 1000, ipPerWindow: 1_000_000, windowMs: 1000 },
  );
  return (await redis.eval(lua("reserve-stock"), keys.length, ...keys, ...args)) as (string | number)[];
}

/** Joins `users` before the start, then seals at the start; returns the line (draw order). */
async function lineUp(users: string[]): Promise<string[]> {
  for (const u of users) expect((await step(t0 - 1000, { join: u })).code).toBe(1);
  expect(await seal(t0)).toBe(1);
  return redis.lrange(saleKeys(saleId).line, 0, -1);
}

describe("the room's step script: the cutoff and returned units", () => {
  /** 1 + the admission cycles (window + grace) left before the end: the positions one unit can still reach. */
  const rounds = (now: number, endsAt = t0 + 3_600_000) =>
    1 + Math.floor((endsAt - 1 - now) / (WINDOW + GRACE));

  it("a unit given back by a lapsed admission is offered again while tickets wait (not stranded by the cutoff)", async () => {
    await queueSale({ stock: 2, perUserLimit: 1 });
    const line = await lineUp(["u1", "u2", "u3", "u4", "u5", "u6"]);
    // the first tick admits two; each of the two held units may come back once per cycle left
    const first = await step(t0, { paid: 0 });
    expect([first.frontier, first.held, first.cutoff]).toEqual([2, 2, 2 + 2 * rounds(t0)]);
    // nobody buys; at the end of the window plus the grace both lapse and the next two are admitted
    let now = t0 + WINDOW + GRACE;
    const second = await step(now, { paid: 0 });
    expect([second.frontier, second.held]).toEqual([4, 2]);
    // they do not buy either: both units come back, and go to positions 5 and 6
    now += WINDOW + GRACE;
    const third = await step(now, { paid: 0 });
    expect(third.remaining).toBe(2);
    const waiting = line.slice(4);
    const admitted = [];
    for (const u of waiting) if ((await ticketOf(u)).s === "a") admitted.push(u);
    expect({ free: third.free, admitted }).toEqual({ free: 0, admitted: waiting });
  });

  it("a queue ticked at its start before anyone joined tells nobody will_not_get while a unit can still come back", async () => {
    await queueSale({ stock: 2, perUserLimit: 1 });
    expect(await seal(t0)).toBe(1);
    const start = await step(t0, { paid: 0 });
    expect(start.cutoff).toBe(2 * rounds(t0));
    const joined = [];
    for (const u of ["j1", "j2", "j3", "j4"]) joined.push(await step(t0 + 1000, { join: u }));
    expect(joined.map((j) => j.ticket?.s)).toEqual(["a", "a", "w", "w"]);
    // j1 and j2 buy nothing; their admissions lapse and both units come back: j3 and j4 are offered them
    const back = await step(t0 + 1000 + WINDOW + GRACE, { paid: 0 });
    expect([back.frontier, back.held]).toEqual([4, 2]);
    expect([(await ticketOf("j3")).s, (await ticketOf("j4")).s]).toEqual(["a", "a"]);
  });

  it("the cutoff falls to the frontier once every unit is paid, and at the sale's end", async () => {
    await queueSale({ stock: 2, perUserLimit: 1 });
    const [a, b] = await lineUp(["a", "b", "c", "d"]);
    await step(t0, { paid: 0 });
    for (const user of [a, b] as string[]) expect((await buy(user, 1, t0 + 10, 1))[0]).toBe(1);
    // both units bought, not yet paid: they may come back (an order that expires), so no final verdict
    const unpaid = await step(t0 + 20, { paid: 0 });
    expect(unpaid.cutoff).toBe(2 + 2 * rounds(t0 + 20));
    // both paid: nothing can come back, everyone past the frontier will not get one
    const paid = await step(t0 + 30, { paid: 2 });
    expect([paid.frontier, paid.cutoff]).toEqual([2, 2]);
    // and it never rises again, even if the stock grew (units added after the cutoff are not queued)
    const later = await step(t0 + 40, { paid: 1 });
    expect(later.cutoff).toBe(2);
  });
});

describe("the room's step script: holds against the operator and the pause", () => {
  it("an operator's removal cannot take the units admissions hold (an admitted buy never fails for stock)", async () => {
    await queueSale({ stock: 2, perUserLimit: 1 });
    const [a, b] = await lineUp(["a", "b", "c"]);
    const s = await step(t0, { paid: 0 });
    expect([s.frontier, s.held, s.free]).toEqual([2, 2, 0]);
    const k = saleKeys(saleId);
    // every unit is held by an admission: removing one must be refused (nothing is free to remove)
    const adjusted = (await redis.eval(
      lua("adjust-stock"),
      4,
      k.meta,
      k.stock,
      k.ledger,
      k.room,
      String(t0 + 1),
      "adj-1",
      "-1",
    )) as (string | number)[];
    const buys = [];
    for (const u of [a, b] as string[]) buys.push(await buy(u, 1, t0 + 2, (await ticketOf(u)).h));
    expect({ adjusted: adjusted[0], buys: buys.map((r) => r[0]) }).toEqual({ adjusted: 14, buys: [1, 1] });
    // after the sale's end no hold keeps a unit: what is left may be removed, whatever the last count said
    await redis.hset(k.room, "held", "5");
    // (units added are never refused, whatever the holds)
    const added = (await redis.eval(
      lua("adjust-stock"),
      4,
      k.meta,
      k.stock,
      k.ledger,
      k.room,
      String(t0 + 1),
      "adj-2",
      "2",
    )) as number[];
    expect(added.slice(0, 2)).toEqual([1, 2]);
    const end = Number(await redis.hget(k.meta, "endsAt"));
    const after = (await redis.eval(
      lua("adjust-stock"),
      4,
      k.meta,
      k.stock,
      k.ledger,
      k.room,
      String(end),
      "adj-3",
      "-2",
    )) as number[];
    expect(after.slice(0, 2)).toEqual([1, 0]);
  });

  it("no admission is given while the sale is paused: its window would run out before anyone may buy", async () => {
    await queueSale({ stock: 1, perUserLimit: 1 });
    const [first] = await lineUp(["p1", "p2"]);
    await redis.hset(saleKeys(saleId).meta, "paused", "1");
    await step(t0, { paid: 0 });
    const paused = await ticketOf(first as string);
    // the shopper admitted now could not buy during the pause (PAUSED) and lapses with the window
    expect((await buy(first as string, 1, t0 + 1, Math.max(1, paused.h)))[0]).toBe(6);
    expect(paused.s).toBe("w");
    // resumed: the next step admits, and the admitted shopper buys
    await redis.hset(saleKeys(saleId).meta, "paused", "0");
    await step(t0 + 2, { paid: 0 });
    const resumed = await ticketOf(first as string);
    expect(resumed.s).toBe("a");
    expect((await buy(first as string, 1, t0 + 3, resumed.h))[0]).toBe(1);
    // a rebuild's quiet period (recoveringUntil) is the same: nobody admitted until it ends
    const quietUntil = t0 + 3 * (WINDOW + GRACE);
    await redis.hset(saleKeys(saleId).meta, "recoveringUntil", String(quietUntil));
    await restore(redis, saleId, { orderId: `o${n}`, userId: first as string, quantity: 1, now: t0 + 4 });
    const lapsed = await step(t0 + 2 * (WINDOW + GRACE), { paid: 0 });
    expect([lapsed.free, lapsed.held]).toEqual([1, 0]);
    const [, second] = await redis.lrange(saleKeys(saleId).line, 0, -1);
    expect((await ticketOf(second as string)).s).toBe("w");
    await step(quietUntil, { paid: 0 });
    expect((await ticketOf(second as string)).s).toBe("a");
  });
});

/** set-sale-paused.lua with src/stock/pause.ts's layout. */
let pauseVersion = 0;
async function setPaused(paused: boolean, now: number) {
  const keys = pauseKeys(saleId);
  const args = [paused ? "1" : "0", String(++pauseVersion), String(now)];
  return redis.eval(lua("set-sale-paused"), keys.length, ...keys, ...args);
}

/** open-room.lua as a rebuild runs it (src/recovery/rebuild.ts): the room kept, a quiet period [from, until). */
async function quietPeriod(from: number, until: number) {
  const k = saleKeys(saleId);
  const keys = openRoomKeys(saleId);
  await redis.eval(
    lua("open-room"),
    keys.length,
    ...keys,
    "cd".repeat(32),
    "y",
    "0",
    String(from),
    String(until),
  );
  await redis.hset(k.meta, "recoveringUntil", String(until));
}

describe("the room's step script: a pause and a quiet period are time out of running admissions", () => {
  it("the resume moves a running admission's end by the pause; none lapses meanwhile; an ended one stays ended", async () => {
    await queueSale({ stock: 3, perUserLimit: 1 });
    const [a, b, c, d] = (await lineUp(["r1", "r2", "r3", "r4"])) as [string, string, string, string];
    await step(t0, { paid: 0 });
    expect((await ticketOf(c)).x).toBe(t0 + WINDOW);
    // a's admission ends before the pause: it is not given the pause
    await redis.hset(saleKeys(saleId).tickets, a, JSON.stringify({ ...(await ticketOf(a)), x: t0 + 10 }));
    await redis.zadd(saleKeys(saleId).active, t0 + 10, a);
    // a resume of a sale not paused moves nothing
    expect(await setPaused(false, t0 + 50)).toBe(1);
    expect((await ticketOf(b)).x).toBe(t0 + WINDOW);
    const pausedAt = t0 + 100;
    expect(await setPaused(true, pausedAt)).toBe(1);
    // paused again later: the pause still counts from its beginning
    expect(await setPaused(true, pausedAt + 5_000)).toBe(1);
    // ticks far past every end: a lapses (over before the pause), b and c do not
    const during = t0 + 10 * (WINDOW + GRACE);
    await step(during, { paid: 0 });
    expect([(await ticketOf(a)).s, (await ticketOf(b)).s, (await ticketOf(c)).s]).toEqual(["l", "a", "a"]);
    expect((await step(during, { paid: 0, read: d })).ticket?.s).toBe("w");
    // the buy is refused for the pause (PAUSED), not because the admission ended
    expect((await buy(b, 1, during, 1))[0]).toBe(6);
    expect(await setPaused(false, during)).toBe(1);
    const moved = t0 + WINDOW + (during - pausedAt);
    expect([(await ticketOf(b)).x, (await ticketOf(c)).x]).toEqual([moved, moved]);
    expect(await redis.zscore(saleKeys(saleId).active, b)).toBe(String(moved));
    // after the resume they still run, hold their units, and buy
    await step(during + 1, { paid: 0 });
    expect([(await ticketOf(b)).s, (await ticketOf(c)).s]).toEqual(["a", "a"]);
    expect((await buy(b, 1, during + 2, 1))[0]).toBe(1);
    // a second pause moves them again, by its own length only
    expect(await setPaused(true, during + 1_000)).toBe(1);
    expect(await setPaused(false, during + 4_000)).toBe(1);
    expect((await ticketOf(c)).x).toBe(moved + 3_000);
    // and they lapse at their moved end (plus the grace)
    await step(moved + 3_000 + GRACE, { paid: 0 });
    expect((await ticketOf(c)).s).toBe("l");
  });

  it("a quiet period moves running admissions by its length, counting an overlap with another or a pause once", async () => {
    await queueSale({ stock: 2, perUserLimit: 1 });
    const [a, b] = (await lineUp(["q1", "q2"])) as [string, string];
    await step(t0, { paid: 0 });
    await quietPeriod(t0 + 100, t0 + 10_100);
    expect((await ticketOf(a)).x).toBe(t0 + WINDOW + 10_000);
    // a second rebuild during the first quiet period: only the time past the first one's end counts
    await quietPeriod(t0 + 5_100, t0 + 15_100);
    expect((await ticketOf(a)).x).toBe(t0 + WINDOW + 15_000);
    // a pause that begins in a quiet period counts from its end; one that runs over a rebuild covers it
    expect(await setPaused(true, t0 + 12_000)).toBe(1);
    await quietPeriod(t0 + 20_000, t0 + 30_000);
    expect((await ticketOf(b)).x).toBe(t0 + WINDOW + 15_000);
    expect(await setPaused(false, t0 + 25_000)).toBe(1);
    // paused from the first quiet period's end (15,100) to the last one's (30,000)
    expect((await ticketOf(b)).x).toBe(t0 + WINDOW + 15_000 + 14_900);
  });
});

describe("the room's step script: a room lost with Redis and no record of it (a sale from before records)", () => {
  it("a running admission keeps its units after the room is lost: nobody is admitted until it has run out", async () => {
    await queueSale({ stock: 1, perUserLimit: 1 });
    const [winner, , last] = (await lineUp(["r1", "r2", "r3"])) as [string, string, string];
    await step(t0, { paid: 0 });
    const r1 = await ticketOf(winner);
    expect(r1.s).toBe("a");
    // Redis loses the room; the rebuild (after the start) opens it again with admitFrom past the
    // admissions given before the loss (src/recovery/rebuild.ts: now + window + grace)
    const k = saleKeys(saleId);
    await redis.del(k.room, k.tickets, k.line, k.late, k.active, k.entries);
    const lostAt = t0 + 5_000;
    const admitFrom = lostAt + WINDOW + GRACE;
    await redis.eval(lua("open-room"), 1, k.room, "seed", "hash", admitFrom);
    await step(lostAt, { join: last });
    await seal(lostAt);
    const again = await step(lostAt, { read: last, paid: 0 });
    expect(again.ticket?.s).toBe("w");
    // and nothing counts as free for a verdict meanwhile (the old admissions may still take it)
    expect(again.free).toBeLessThanOrEqual(0);
    // the shopper admitted before the loss still finds its unit
    expect((await buy(winner, 1, lostAt + 1_000, r1.h))[0]).toBe(1);
    // and the room admits again once the old admissions ran out
    await restore(redis, saleId, { orderId: `o${n}`, userId: winner, quantity: 1, now: admitFrom });
    const later = await step(admitFrom, { read: last, paid: 0 });
    expect(later.ticket?.s).toBe("a");
  });
  // A room with a record keeps every promise through a loss: room-after-loss.test.ts (through the app).
});

describe("restore then step: a returned unit is offered once", () => {
  it("an expired order's unit admits exactly one waiter, however many steps run", async () => {
    await queueSale({ stock: 1, perUserLimit: 1 });
    const [e1Id, ...rest] = (await lineUp(["e1", "e2", "e3"])) as string[];
    const e1Id_ = e1Id as string;
    await step(t0, { paid: 0 });
    const e1 = await ticketOf(e1Id_);
    const bought = await buy(e1Id_, 1, t0 + 1, e1.h);
    expect(bought[0]).toBe(1);
    // the admission lapses (bought everything), then the order expires and its unit comes back
    let now = t0 + WINDOW + GRACE;
    await step(now, { paid: 0 });
    await restore(redis, saleId, { orderId: String(bought[1]), userId: e1Id_, quantity: 1, now });
    for (let i = 0; i < 5; i++) {
      now += 100;
      await step(now, { paid: i % 2 === 0 ? 0 : -1 });
    }
    const states = await Promise.all(rest.map(async (u) => (await ticketOf(u)).s));
    expect(states.filter((st) => st === "a")).toHaveLength(1);
  });
});

describe("a draw's backups", () => {
  it("are promoted in draw order, exactly at the tick where a winner's admission lapses", async () => {
    await queueSale({ stock: 2, perUserLimit: 1 });
    await redis.hset(saleKeys(saleId).meta, "admission", "draw");
    const line = (await lineUp(["b1", "b2", "b3", "b4", "b5"])) as string[];
    await step(t0, { paid: 0 });
    const states = async () => Promise.all(line.map(async (u) => (await ticketOf(u)).s));
    expect(await states()).toEqual(["a", "a", "w", "w", "w"]);
    // the first winner buys; the second does not
    expect((await buy(line[0] as string, 1, t0 + 1, 1))[0]).toBe(1);
    // just before the second winner's lapse (window + grace) nobody moves, at every kind of step
    const x = t0 + WINDOW;
    await step(x + GRACE - 1, { paid: 0 });
    await step(x + GRACE - 1, { read: line[3] });
    expect(await states()).toEqual(["a", "a", "w", "w", "w"]);
    // at the lapse: exactly the first backup, once, whatever steps follow
    await step(x + GRACE, { paid: 0 });
    await step(x + GRACE + 1, { paid: 0 });
    await step(x + GRACE + 2, { read: line[4] });
    expect(await states()).toEqual(["l", "l", "a", "w", "w"]);
  });
});

import fc from "fast-check";
import type { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { saleKeys } from "../../../src/stock/keys";
import { reserveScriptCall } from "../../../src/stock/reserve-call";
import type { StoredTicket } from "../../../src/stock/room-step";
import { initSale, lua, restore, sealRoom } from "../../support/lua";
import { redisServerForFile } from "../../support/redis-per-file";

/*
 * The waiting room's promises under random interleavings of joins, steps, ticks, buys, cancels,
 * payments, operator adjustments and pauses, against a real redis-server (the scripts with the
 * layouts of src/stock/*.ts): an admitted buy within its window and allowance never fails for stock,
 * no position past a cutoff once reported is ever admitted, the frontier never goes back, a position
 * never changes after the seal, the stock adds up.
 */

let redis: Redis;
redisServerForFile((connection) => {
  redis = connection;
});

const t0 = 1_800_000_000_000;
const WINDOW = 10_000;
const GRACE = 3_000;

type Op =
  | { op: "join"; u: number }
  | { op: "read"; u: number }
  | { op: "tick"; stale: number; skew: number }
  | { op: "wait"; ms: number }
  | { op: "buy"; u: number; q: number }
  | { op: "cancel"; i: number }
  | { op: "pay"; i: number }
  | { op: "adjust"; delta: number }
  | { op: "pause"; on: boolean };

const ops: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant("join" as const), u: fc.nat(11) }),
  fc.record({ op: fc.constant("read" as const), u: fc.nat(11) }),
  fc.record({ op: fc.constant("tick" as const), stale: fc.nat(5), skew: fc.integer({ min: -50, max: 50 }) }),
  fc.record({ op: fc.constant("wait" as const), ms: fc.integer({ min: 1, max: WINDOW + GRACE + 1 }) }),
  fc.record({ op: fc.constant("buy" as const), u: fc.nat(11), q: fc.integer({ min: 1, max: 3 }) }),
  fc.record({ op: fc.constant("buy" as const), u: fc.nat(11), q: fc.integer({ min: 1, max: 3 }) }),
  fc.record({ op: fc.constant("cancel" as const), i: fc.nat(20) }),
  fc.record({ op: fc.constant("pay" as const), i: fc.nat(20) }),
  fc.record({ op: fc.constant("adjust" as const), delta: fc.integer({ min: -3, max: 3 }) }),
  fc.record({ op: fc.constant("pause" as const), on: fc.boolean() }),
);

describe("the waiting room against random interleavings", () => {
  it("keeps its promises", { timeout: 240_000 }, async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 0, max: 8 }),
        fc.array(ops, { maxLength: 40 }),
        async (stock, limit, early, script) => {
          const saleId = `m${(++run).toString(36).padStart(11, "0")}`;
          const k = saleKeys(saleId);
          await initSale(redis, saleId, { stock, perUserLimit: limit, startsAt: t0, endsAt: t0 + 3_600_000 });
          await redis.hset(k.meta, "admission", "queue");
          await redis.hset(k.room, "seed", "cd".repeat(32), "seedHash", "x");
          let now = t0 - 1000;
          let minCutoff = Number.POSITIVE_INFINITY;
          let frontier = 0;
          let paused = false;
          let adjusted = 0;
          const positions = new Map<string, number>();
          const orders: { id: string; u: string; q: number; state: "live" | "paid" | "gone" }[] = [];
          const step = async (o: { join?: string; read?: string; paid?: number }) => {
            const keys = [
              k.meta,
              k.stock,
              k.holdings,
              k.room,
              k.tickets,
              k.line,
              k.late,
              k.active,
              k.journal,
            ];
            const args = [now, o.join ?? "", `t-${o.join ?? ""}`, WINDOW, GRACE, o.paid ?? -1, o.read ?? ""];
            const r = (await redis.eval(lua("room-step"), keys.length, ...keys, ...args.map(String))) as (
              | string
              | number
            )[];
            if (Number(r[0]) !== 1) return;
            expect(Number(r[2]), "the frontier never goes back").toBeGreaterThanOrEqual(frontier);
            frontier = Number(r[2]);
            if (Number(r[3]) >= 0) minCutoff = Math.min(minCutoff, Number(r[3]));
          };
          const seal = () => sealRoom(redis, saleId, now);
          const paidReadings: number[] = [];
          const paidUnits = () => orders.filter((o) => o.state === "paid").reduce((s, o) => s + o.q, 0);
          const ticketOf = async (u: string) => {
            const raw = await redis.hget(k.tickets, u);
            return raw ? (JSON.parse(raw) as StoredTicket) : null;
          };
          const checkAll = async () => {
            const all = await redis.hgetall(k.tickets);
            for (const [u, raw] of Object.entries(all)) {
              const t = JSON.parse(raw) as StoredTicket;
              if (t.p > 0) {
                const was = positions.get(u);
                if (was !== undefined) expect(t.p, `${u}'s position never changes`).toBe(was);
                positions.set(u, t.p);
              }
              if (t.s !== "w") expect(t.p, `${u} admitted past the cutoff`).toBeLessThanOrEqual(minCutoff);
            }
            const remaining = Number(await redis.get(k.stock));
            const holdings = Object.values(await redis.hgetall(k.holdings)).reduce(
              (s, n) => s + Number(n),
              0,
            );
            expect(remaining).toBeGreaterThanOrEqual(0);
            expect(remaining + holdings, "the stock adds up").toBe(stock + adjusted);
          };

          for (let u = 0; u < early; u++) await step({ join: `u${u}` });
          now = t0;
          await seal();
          await step({ paid: 0 });
          await checkAll();
          for (const s of script) {
            switch (s.op) {
              case "join":
                await step({ join: `u${s.u}`, read: `u${s.u}` });
                break;
              case "read":
                await step({ read: `u${s.u}` });
                break;
              case "tick": {
                // a paid reading no newer than now (an older one errs high), by a process whose clock is a little off
                paidReadings.push(paidUnits());
                const paid = paidReadings[Math.max(0, paidReadings.length - 1 - s.stale)] ?? 0;
                const at = now;
                now += s.skew;
                await step({ paid });
                now = at;
                break;
              }
              case "wait":
                now += s.ms;
                break;
              case "buy": {
                const u = `u${s.u}`;
                const t = await ticketOf(u);
                if (t?.s !== "a" || now >= t.x) break;
                const held = Number((await redis.hget(k.holdings, u)) ?? 0);
                if (held + s.q > Math.min(limit, t.h)) break;
                const id = `${saleId}-o${orders.length}`;
                const { keys, args } = reserveScriptCall(
                  {
                    saleId,
                    orderId: id,
                    userId: u,
                    ip: "ip",
                    quantity: s.q,
                    idempotencyKey: null,
                    now,
                    admittedUnits: t.h,
                  },
                  { userPerWindow: 1e6, ipPerWindow: 1e6, windowMs: 1000 },
                );
                const r = (await redis.eval(lua("reserve-stock"), keys.length, ...keys, ...args)) as number[];
                if (paused) expect(r[0]).toBe(6);
                else {
                  expect(
                    r[0],
                    `admitted ${u} (holds ${t.h}, holding ${held}) buying ${s.q} at ${now - t0}`,
                  ).toBe(1);
                  orders.push({ id, u, q: s.q, state: "live" });
                }
                break;
              }
              case "cancel": {
                const o = orders.filter((x) => x.state === "live")[s.i % Math.max(1, orders.length)];
                if (!o) break;
                await restore(redis, saleId, { orderId: o.id, userId: o.u, quantity: o.q, now });
                o.state = "gone";
                break;
              }
              case "pay": {
                const o = orders.filter((x) => x.state === "live")[s.i % Math.max(1, orders.length)];
                if (o) o.state = "paid";
                break;
              }
              case "adjust": {
                const r = (await redis.eval(
                  lua("adjust-stock"),
                  4,
                  k.meta,
                  k.stock,
                  k.ledger,
                  k.room,
                  String(now),
                  `a${now}-${Math.random()}`,
                  String(s.delta),
                )) as number[];
                if (r[0] === 1) adjusted += s.delta;
                break;
              }
              case "pause":
                paused = s.on;
                await redis.hset(k.meta, "paused", s.on ? "1" : "0");
                break;
            }
            await checkAll();
          }
        },
      ),
      { numRuns: 1500 },
    );
  });
});

import { describe, expect, it } from "vitest";
import { saleKeys } from "../../../src/stock/keys";
import { appForFile } from "../../support/app-per-file";
import { roomShoppers, type Ticket } from "../../support/room-shoppers";

/*
 * An adversarial review of the waiting room's Postgres record (src/room/room-record.ts): the cases where
 * a promise shown before a loss did not hold, or something was shown that Postgres did not hold. Each
 * failed before its fix.
 */

const app = appForFile({
  // Redis paused, restarted or flushed here: the stack's one server, whatever the suite's layout
  oneServer: true,
  vars: {
    RATE_LIMIT_USER_PER_WINDOW: "1000",
    SHOPPER_LIMIT_USER_PER_WINDOW: "1000",
    ADMISSION_SECRET: "admission-secret-for-tests-only",
    ADMISSION_WINDOW_SECONDS: "6",
    BUY_RESOLVE_WINDOW_MS: "2000",
    RECOVERY_QUIET_SECONDS: "1",
  },
});
const { join, me, loseRedis } = roomShoppers(app);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function pgTicket(saleId: string, userId: string) {
  const r = await app.db.query("select ticket, v from room_tickets where sale_id = $1 and user_id = $2", [
    saleId,
    userId,
  ]);
  return r.rows[0] as { ticket: { id: string; n: number; s: string }; v: string } | undefined;
}

/** Every key of the sale's slot, as a lagging replica would hold them (DUMP). */
async function snapshot(saleId: string): Promise<Map<string, Buffer>> {
  const keys = await app.redis.keys(`sale:{s:${saleId}}*`);
  const out = new Map<string, Buffer>();
  for (const k of keys) {
    const b = await app.redis.dumpBuffer(k);
    if (b) out.set(k, b);
  }
  return out;
}

/** A failover to that replica: the sale's keys as they were at the snapshot (the last writes lost). */
async function failoverTo(saleId: string, snap: Map<string, Buffer>) {
  const now = await app.redis.keys(`sale:{s:${saleId}}*`);
  if (now.length) await app.redis.del(...now);
  for (const [k, b] of snap) await app.redis.restore(k, 0, b, "REPLACE");
}

describe("a failover that keeps the room's seed but loses its last writes", () => {
  // The sale's rebuild does not see it (its epoch and the room's seed are there): the room's journal
  // write does (its record holds positions of this life past Redis's), and gives the room back.
  it("keeps a shown place and writes what it shows after", async () => {
    const sale = await app.api.createSale({
      admission: "queue",
      stock: 1,
      perUserLimit: 1,
      startsAt: new Date(Date.now() + 120_000).toISOString(),
    });
    for (const u of ["a", "b", "c"]) expect((await join(sale.saleId, u)).status).toBe(200);
    const snap = await snapshot(sale.saleId);
    const d1 = (await join(sale.saleId, "d")).body;
    const e1 = (await join(sale.saleId, "e")).body;
    expect([d1.position, e1.position]).toEqual([4, 5]);

    await failoverTo(sale.saleId, snap);

    // the shoppers come back (a 503 while the room is given back is retried, as the page does)
    const again = async (u: string) => {
      for (let i = 0; ; i++) {
        const res = await join(sale.saleId, u);
        if (res.status === 200 || i >= 20) return res;
        expect(res.status).toBe(503);
        await sleep(250);
      }
    };
    const e2 = (await again("e")).body;
    const d2 = (await again("d")).body;
    // every place shown before the failover holds, with the same ticket, and Postgres holds what is shown
    expect([d2.ticketId, d2.position]).toEqual([d1.ticketId, 4]);
    expect([e2.ticketId, e2.position]).toEqual([e1.ticketId, 5]);
    expect((await pgTicket(sale.saleId, "e"))?.ticket.id).toBe(e2.ticketId);
    const f = (await again("f")).body;
    expect(f.position).toBe(6);
    expect((await pgTicket(sale.saleId, "f"))?.ticket.id).toBe(f.ticketId);
  });
});

describe("a room from before records (live when the migration lands), lost", () => {
  it("is not restored from the record its first change began: it starts again, with the seed it published", async () => {
    const sale = await app.api.createSale({ admission: "queue", stock: 1, perUserLimit: 1 });
    const published = (await app.api.call("GET", `/api/sales/${sale.saleId}/draw`)).body.seedHash;
    for (const u of ["l0", "l1", "l2"]) expect((await join(sale.saleId, u)).status).toBe(200);
    // as a room of the version before records: nothing in Postgres, no journal
    await app.db.query("delete from room_tickets where sale_id = $1", [sale.saleId]);
    await app.db.query("delete from room_records where sale_id = $1", [sale.saleId]);
    await app.redis.del(saleKeys(sale.saleId).journal);
    expect((await join(sale.saleId, "l3")).status).toBe(200); // the first change after the deploy
    const partial = await app.db.query("select complete from room_records where sale_id = $1", [sale.saleId]);
    expect(partial.rows[0]?.complete).toBe(false);
    await loseRedis(sale.saleId);
    // not a room of one ticket (l3 at position 1) and an empty seal: the lost room starts again
    for (const u of ["l0", "l3"]) expect((await me(sale.saleId, u)).status, u).toBe(404);
    expect((await app.api.call("GET", `/api/sales/${sale.saleId}/draw`)).body.seedHash).toBe(published);
    const fresh = await join(sale.saleId, "l3");
    expect([fresh.status, fresh.body.position]).toEqual([200, 1]);
    // and from now on it is recorded whole
    await loseRedis(sale.saleId);
    expect((await me(sale.saleId, "l3")).body.ticketId).toBe(fresh.body.ticketId);
  });

  it("an operator's rebuild of such a room records the seed it published, not a new one", async () => {
    const sale = await app.api.createSale({
      admission: "draw",
      stock: 1,
      perUserLimit: 1,
      startsAt: new Date(Date.now() + 120_000).toISOString(),
    });
    for (const u of ["g0", "g1"]) expect((await join(sale.saleId, u)).status).toBe(200);
    await app.db.query("delete from room_tickets where sale_id = $1", [sale.saleId]);
    await app.db.query("delete from room_records where sale_id = $1", [sale.saleId]);
    await app.redis.del(saleKeys(sale.saleId).journal);
    const published = (await app.api.call("GET", `/api/sales/${sale.saleId}/draw`)).body.seedHash;
    expect((await app.api.admin("POST", `/sales/${sale.saleId}/rebuild`)).status).toBe(200);
    expect((await join(sale.saleId, "g2")).status).toBe(200); // a change: the journal records the room's seed
    const rec = await app.db.query("select seed_hash from room_records where sale_id = $1", [sale.saleId]);
    expect(rec.rows[0]?.seed_hash).toBe(published);
    await loseRedis(sale.saleId);
    expect((await app.api.call("GET", `/api/sales/${sale.saleId}/draw`)).body.seedHash).toBe(published);
  });
});

describe("Postgres down at the start", () => {
  it("nobody is admitted while this process cannot write the room's journal: no turn runs out unseen", async () => {
    const startsAt = Date.now() + 4_000;
    const sale = await app.api.createSale({
      admission: "queue",
      stock: 1,
      perUserLimit: 1,
      startsAt: new Date(startsAt).toISOString(),
    });
    for (const u of ["p0", "p1"]) expect((await join(sale.saleId, u)).body.verdict).toBe("may_get");
    await app.stack.postgres.stop();
    try {
      // a join before the start: its ticket is made in Redis, its write fails (503, shown nothing)
      expect((await join(sale.saleId, "p2")).status).toBe(503);
      await sleep(Math.max(0, startsAt - Date.now()) + 300);
      for (let i = 0; i < 3; i++) expect((await me(sale.saleId, "p0")).status).toBe(503);
      const inRedis = await app.redis.hmget(saleKeys(sale.saleId).tickets, "p0", "p1", "p2");
      expect(inRedis.map((t) => JSON.parse(t ?? "{}").s)).toEqual(["w", "w", "w"]);
      await sleep(10_500); // longer than an admission's window (6 s) and grace (4 s)
    } finally {
      await app.stack.postgres.start();
    }
    await sleep(5_500); // the process's pause after a failed write
    // the seal shuffled the three tickets taken before the start: whoever is first is admitted now, and
    // nobody's turn ran out while every answer was a 503
    const users = ["p0", "p1", "p2"];
    let shown = new Map<string, Ticket>();
    for (let i = 0; i < 40; i++) {
      shown = new Map();
      for (const u of users) {
        const r = await me(sale.saleId, u);
        if (r.status === 200) shown.set(u, r.body);
      }
      if ([...shown.values()].some((t) => t.verdict === "admitted")) break;
      await sleep(300);
    }
    const first = [...shown.values()].find((t) => t.position === 1);
    expect(first?.verdict).toBe("admitted");
    expect([...shown.values()].filter((t) => t.verdict === "lapsed")).toEqual([]);
    // the join answered 503 kept its ticket: joining again shows it
    expect((await join(sale.saleId, "p2")).body.ticketId).toBe(shown.get("p2")?.ticketId);
  });
});

describe("shoppers whose ids look like the journal's own members", () => {
  it("are journalled and restored like anyone", async () => {
    const sale = await app.api.createSale({
      admission: "queue",
      stock: 1,
      perUserLimit: 1,
      startsAt: new Date(Date.now() + 120_000).toISOString(),
    });
    const ids = ["~room", "r", "e", "t:x"];
    const joined = new Map<string, string>();
    for (const u of ids) joined.set(u, (await join(sale.saleId, u)).body.ticketId);
    for (const u of ids) expect((await pgTicket(sale.saleId, u))?.ticket.id, u).toBe(joined.get(u));
    await loseRedis(sale.saleId);
    for (const u of ids) expect((await me(sale.saleId, u)).body.ticketId, u).toBe(joined.get(u));
  });
});

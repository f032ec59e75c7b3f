import type { Redis } from "ioredis";
import { beforeEach, describe, expect, it } from "vitest";
import { type RecordRow, roomFromRecord } from "../../../src/room/room-record";
import { saleKeys } from "../../../src/stock/keys";
import type { StoredTicket } from "../../../src/stock/room-step";
import { roomStepKeys } from "../../../src/stock/room-step";
import { initSale, lua, sealRoom } from "../../support/lua";
import { redisServerForFile } from "../../support/redis-per-file";

/*
 * The waiting room's journal (room-journal.lua, room-journal-ack.lua) and its restore (room-restore.lua)
 * against a real redis-server, with the layouts of src/stock/room-journal*.ts and room-restore.ts: what
 * src/room/room-record.ts relies on to show nothing Postgres does not hold and to give a lost room back.
 */

let redis: Redis;
const t0 = 1_800_000_000_000;
let saleId = "";

redisServerForFile((connection) => {
  redis = connection;
});
beforeEach(async () => {
  saleId = `s${Math.random().toString(36).slice(2, 13).padEnd(11, "0")}`;
  await initSale(redis, saleId, { stock: 2, perUserLimit: 1, startsAt: t0, endsAt: t0 + 3_600_000 });
  await redis.hset(saleKeys(saleId).meta, "admission", "queue");
  await redis.hset(saleKeys(saleId).room, "seed", "ab".repeat(32), "seedHash", "x");
});

async function step(now: number, o: { join?: string; paid?: number } = {}): Promise<number> {
  const keys = roomStepKeys(saleId);
  const args = [now, o.join ?? "", `t-${o.join ?? ""}`, 60_000, 10_000, o.paid ?? -1, ""];
  const r = (await redis.eval(lua("room-step"), keys.length, ...keys, ...args.map(String))) as unknown[];
  return Number(r[11]); // the journal position after the step
}

type Page = {
  code: number;
  through: number;
  room: Record<string, unknown> | null;
  entries: string;
  tickets: Map<string, StoredTicket>;
};

async function readPage(limit: number): Promise<Page> {
  const k = saleKeys(saleId);
  const r = (await redis.eval(
    lua("room-journal"),
    4,
    k.room,
    k.tickets,
    k.journal,
    k.entries,
    limit,
  )) as string[];
  const tickets = new Map<string, StoredTicket>();
  for (let i = 8; i + 1 < r.length; i += 2) tickets.set(String(r[i]), JSON.parse(String(r[i + 1])));
  return {
    code: Number(r[0]),
    through: Number(r[1]),
    room: r[2] ? JSON.parse(String(r[2])) : null,
    entries: String(r[5] ?? ""),
    tickets,
  };
}

async function ack(page: Page): Promise<number> {
  const k = saleKeys(saleId);
  const args: string[] = [String(page.through)];
  if (page.room) args.push("r", String(page.room.v));
  if (page.entries) args.push("e", "");
  for (const [u, t] of page.tickets) args.push(`t:${u}`, String(t.v));
  const r = (await redis.eval(lua("room-journal-ack"), 3, k.room, k.tickets, k.journal, ...args)) as number[];
  return Number(r[1]);
}

const journal = () => redis.zrange(saleKeys(saleId).journal, "0", "-1", "WITHSCORES");

describe("the room's journal", () => {
  it("notes each change at its first position; a page and its acknowledgement empty it", async () => {
    const a = await step(t0 - 10, { join: "u1" });
    const b = await step(t0 - 5, { join: "u2" });
    expect([a, b]).toEqual([1, 2]);
    // a step that changes nothing writes no position
    expect(await step(t0 - 4)).toBe(2);
    expect(await journal()).toEqual(["t:u1", "1", "t:u2", "2"]);
    const page = await readPage(1_000);
    expect(page.through).toBe(2);
    expect([...page.tickets.keys()]).toEqual(["u1", "u2"]);
    expect(page.tickets.get("u2")?.v).toBe(2);
    expect(await ack(page)).toBe(2);
    expect(await journal()).toEqual([]);
    // Redis is told how far Postgres holds the journal (a replica behind that says less lost writes)
    expect(await redis.hget(saleKeys(saleId).room, "recorded")).toBe("2");
  });

  it("keeps a member that changed between its read and its acknowledgement, at its first unwritten position", async () => {
    await step(t0 - 10, { join: "u1" });
    await step(t0 - 5, { join: "u2" });
    const page = await readPage(1_000);
    // the start: the seal and u1's admission (and the room's frontier) change after the read
    expect(await sealRoom(redis, saleId, t0)).toBe(1);
    const after = await step(t0, { paid: 0 });
    expect(await ack(page)).toBe(0);
    const left = await journal();
    expect(left.filter((_, i) => i % 2 === 0).sort()).toEqual(["e", "r", "t:u1", "t:u2"]);
    // u1 keeps the position of its first unwritten change (its join), not its admission's
    expect(left[left.indexOf("t:u1") + 1]).toBe("1");
    const again = await readPage(1_000);
    expect(again.through).toBe(after);
    expect(again.tickets.get("u1")?.s).toBe("a");
    expect(again.room).toMatchObject({ sealed: "1", frontier: "2" });
    // the seal's entry list travels once, apart from the room's fields (a frontier's move does not resend it)
    expect(JSON.parse(again.entries)).toHaveLength(2);
    expect(again.room).not.toHaveProperty("entries");
    expect(await ack(again)).toBe(4);
    expect(await journal()).toEqual([]);
    await step(t0 + 1, { join: "u3" });
    expect((await readPage(1_000)).entries).toBe("");
  });

  it("a page that does not hold the whole journal leaves the room's fields and stops below what it left out", async () => {
    for (const [i, u] of ["u1", "u2", "u3", "u4"].entries()) await step(t0 - 100 + i, { join: u });
    await sealRoom(redis, saleId, t0);
    await step(t0, { paid: 0 }); // u1, u2 admitted: their positions stay their joins'; the room and the entries at 5
    const page = await readPage(3);
    // members by first position: u1 1, u2 2, u3 3, u4 4, the room and the entries 5: the fourth is left out
    expect(page.through).toBe(3);
    expect(page.room).toBeNull();
    const two = await readPage(4);
    // the room is not in a page of 4 either (u1..u4), and the frontier it would write is newer than u4's join
    expect([two.through, two.room]).toEqual([4, null]);
    // u1's state in the page is its admission (newer than the page's `through`): a newer ticket than the
    // room's fields only errs safe (an admitted ticket past the frontier is never admitted twice)
    expect(two.tickets.get("u1")?.s).toBe("a");
  });

  it("a room without its seed (lost) has no journal to read or acknowledge", async () => {
    await step(t0 - 10, { join: "u1" });
    await redis.hdel(saleKeys(saleId).room, "seed");
    expect((await readPage(10)).code).toBe(2);
    const k = saleKeys(saleId);
    const r = (await redis.eval(
      lua("room-journal-ack"),
      3,
      k.room,
      k.tickets,
      k.journal,
      "u1",
      "1",
    )) as number[];
    expect(r).toEqual([2]);
  });
});

describe("the room given back from its record", () => {
  async function roomNow() {
    const k = saleKeys(saleId);
    const tickets = await redis.hgetall(k.tickets);
    return {
      line: await redis.lrange(k.line, 0, -1),
      late: await redis.lrange(k.late, 0, -1),
      active: await redis.zrange(k.active, "0", "-1", "WITHSCORES"),
      tickets: Object.fromEntries(
        Object.entries(tickets).map(([u, t]) => [u, JSON.parse(t) as StoredTicket]),
      ),
      room: await redis.hgetall(k.room),
      entries: await redis.get(k.entries),
    };
  }

  /** The record as Postgres holds it after the journal was written: every ticket, the room's fields. */
  async function recordOf(): Promise<{ record: RecordRow; tickets: { userId: string; t: StoredTicket }[] }> {
    const now = await roomNow();
    const f = now.room;
    const fields: Record<string, string> = {};
    for (const name of ["v", "frontier", "cutoff", "sealed", "drawnAt", "entriesHash", "quietUntil"])
      if (f[name] !== undefined) fields[name] = f[name] as string;
    return {
      record: {
        seed: f.seed as string,
        seed_hash: f.seedHash as string,
        fields,
        entries: now.entries ? (JSON.parse(now.entries) as string[]) : null,
        v: Number(f.v ?? 0),
        through: Number(f.seq ?? 0),
      },
      // the journal writes tickets as they were at their last change: a ticket joined before the seal
      // and not changed since holds no position (p 0); the restore computes it
      tickets: Object.entries(now.tickets).map(([userId, t]) => ({
        userId,
        t: { ...t, p: t.s === "w" ? 0 : t.p },
      })),
    };
  }

  async function restoreFrom(
    room: Awaited<ReturnType<typeof roomFromRecord>>,
    nonce = "n1",
  ): Promise<number> {
    const k = saleKeys(saleId);
    const staged = k.staged(nonce);
    if (room.tickets.length) await redis.hset(staged.tickets, Object.fromEntries(room.tickets));
    if (room.line.length) await redis.hset(staged.lists, "line:0", JSON.stringify(room.line));
    if (room.late.length) await redis.hset(staged.lists, "late:0", JSON.stringify(room.late));
    const keys = [
      k.room,
      k.tickets,
      k.line,
      k.late,
      k.active,
      k.entries,
      k.journal,
      staged.tickets,
      staged.lists,
    ];
    const args = [
      JSON.stringify(room.fields),
      room.entries ? JSON.stringify(room.entries) : "",
      JSON.stringify(room.active),
    ];
    const reply = (await redis.eval(lua("room-restore"), keys.length, ...keys, ...args)) as number[];
    return Number(reply[0]);
  }

  it("a sealed room comes back with the same line, places, admissions and cutoff", async () => {
    const users = ["a", "b", "c", "d", "e", "f"];
    for (const [i, u] of users.entries()) await step(t0 - 100 + i, { join: u });
    await sealRoom(redis, saleId, t0);
    await step(t0 + 1, { join: "late1" }); // after the seal: the next place at once
    await step(t0 + 2, { paid: 0 }); // admissions and a cutoff
    const before = await roomNow();
    const { record, tickets } = await recordOf();
    const room = await roomFromRecord(record, tickets, t0);
    // the room is lost
    const k = saleKeys(saleId);
    await redis.del(k.room, k.tickets, k.line, k.late, k.active, k.entries, k.journal);
    expect(await restoreFrom(room)).toBe(1);
    const after = await roomNow();
    expect(after.line).toEqual(before.line);
    expect(after.active).toEqual(before.active);
    for (const u of [...users, "late1"]) expect(after.tickets[u]?.p, u).toBe(before.tickets[u]?.p);
    expect(after.room).toMatchObject({
      frontier: before.room.frontier,
      cutoff: before.room.cutoff,
      sealed: "1",
      seed: before.room.seed,
      entriesHash: before.room.entriesHash,
    });
    expect(after.entries).toBe(before.entries);
    expect(Number(after.room.seq)).toBeGreaterThanOrEqual(Number(before.room.seq));
    // the staged keys are gone
    expect(await redis.keys(`sale:{s:${saleId}}:q:staged:*`)).toEqual([]);
  });

  it("an unsealed room comes back with its tickets before and after the start in their lists", async () => {
    await step(t0 - 10, { join: "early1" });
    await step(t0 - 5, { join: "early2" });
    // a ticket after the start, before anyone sealed (room-step.lua puts it in the late list)
    const k = saleKeys(saleId);
    const keys = roomStepKeys(saleId);
    await redis.eval(
      lua("room-step"),
      keys.length,
      ...keys,
      String(t0 + 1),
      "late1",
      "t-late1",
      "60000",
      "10000",
      "-1",
      "",
    );
    const before = await roomNow();
    const { record, tickets } = await recordOf();
    const room = await roomFromRecord(record, tickets, t0);
    await redis.del(k.room, k.tickets, k.line, k.late, k.active, k.entries, k.journal);
    expect(await restoreFrom(room)).toBe(1);
    const after = await roomNow();
    expect([after.line, after.late]).toEqual([before.line, before.late]);
    expect(after.room.count).toBe("3");
  });

  it("a room that has its seed is not restored over, and the staged keys are dropped", async () => {
    await step(t0 - 10, { join: "kept" });
    const before = await roomNow();
    const { record, tickets } = await recordOf();
    const room = await roomFromRecord(
      record,
      [...tickets, { userId: "ghost", t: { ...(tickets[0]?.t as StoredTicket), id: "g", n: 9 } }],
      t0,
    );
    expect(await restoreFrom(room, "n2")).toBe(20);
    expect(await roomNow()).toEqual(before);
    expect(await redis.keys(`sale:{s:${saleId}}:q:staged:*`)).toEqual([]);
  });
});

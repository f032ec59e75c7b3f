import { sql } from "drizzle-orm";
import { type Db, withDb } from "../db/client";
import { StoreUnavailableError } from "../errors";
import type { Deps, LifecycleDeps } from "../services";
import { type JournalPage, readRoomJournal } from "../stock/room-journal";
import { acknowledgeRoomJournal } from "../stock/room-journal-ack";
import { type RestoredRoom, restoreRoomState } from "../stock/room-restore";
import type { StoredTicket } from "../stock/room-step";
import { drawOrder, newSeed, sha256Hex } from "./draw";

/**
 * A waiting room's record in Postgres: what the room promised, so a rebuild after a Redis loss gives it
 * back and every promise made before the loss holds after it (a ticket's place, an admission's units, a
 * `will_not_get`, the draw's seed and entries).
 *
 * The seed is written when the sale is created, before Redis has it. Everything else goes through the
 * room's journal: each script that changes the room notes what changed (room-step.lua), and a request
 * that shows the room (a ticket, the feed's frame, the draw) first has the journal written to Postgres
 * up to the step it shows ({@link untilRoomRecorded}). So nothing is shown that Postgres does not hold,
 * and what Redis loses is only what nobody has been shown.
 */

/** How many of a room's changed tickets one write carries. */
const PAGE = 1_000;
/** How long a request waits for its room's journal to be written before answering 503. */
const WAIT_MS = 3_000;
/** A request of this process writing a room's journal for longer than this is not waited for. */
const WRITER_LEASE_MS = 1_000;

/**
 * The room's seed, recorded in Postgres before Redis has it: the one a sale's creation made, or the one
 * already recorded (a retried create, a rebuild).
 */
export async function recordRoomSeed(db: Db, saleId: string): Promise<{ seed: string; seedHash: string }> {
  const seed = newSeed();
  const seedHash = await sha256Hex(seed);
  const result = await withDb(() =>
    db.execute<{ seed: string; seed_hash: string }>(sql`
      with ins as (
        insert into room_records (sale_id, seed, seed_hash) values (${saleId}, ${seed}, ${seedHash})
        on conflict (sale_id) do nothing returning seed, seed_hash
      )
      select seed, seed_hash from ins union all
      select seed, seed_hash from room_records where sale_id = ${saleId} and not exists (select 1 from ins)`),
  );
  const row = result.rows[0];
  return row ? { seed: row.seed, seedHash: row.seed_hash } : { seed, seedHash };
}

/**
 * Returns once the room's journal is in Postgres up to `seq` (a step's journal position), writing it
 * if needed. In a process, one request writes at a time; the others wait on the position it reaches
 * (a number in memory, never its promise). 503 (StoreUnavailableError) when Postgres cannot take it
 * within {@link WAIT_MS}: the room then shows nothing it might lose.
 */
export async function untilRoomRecorded(
  d: Pick<Deps, "db" | "redis" | "memory">,
  saleId: string,
  seq: number,
): Promise<void> {
  const known = d.memory.roomRecords;
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const mark = known.get(saleId) ?? { through: 0, writingSince: 0 };
    known.set(saleId, mark);
    if (mark.through >= seq) return;
    if (Date.now() > deadline)
      throw new StoreUnavailableError("postgres", new Error(`room ${saleId}: journal not written`));
    if (mark.writingSince > Date.now() - WRITER_LEASE_MS) {
      await new Promise((resolve) => setTimeout(resolve, 2));
      continue;
    }
    mark.writingSince = Date.now();
    try {
      const through = await writeRoomJournal(d, saleId);
      mark.through = Math.max(mark.through, through);
    } finally {
      mark.writingSince = 0;
    }
  }
}

/**
 * Writes the oldest page of the room's journal to Postgres in one statement (the tickets, each only
 * over an older reading of itself; the room's fields likewise) and forgets what it wrote. Returns the
 * journal position up to which everything is now written.
 */
export async function writeRoomJournal(d: Pick<Deps, "db" | "redis">, saleId: string): Promise<number> {
  const page = await readRoomJournal(d.redis, saleId, PAGE);
  if (!page) return 0;
  if (page.tickets.length === 0 && !page.room) return page.through;
  await writePage(d.db, saleId, page);
  await acknowledgeRoomJournal(d.redis, saleId, page);
  return page.through;
}

async function writePage(db: Db, saleId: string, page: JournalPage): Promise<void> {
  const tickets = JSON.stringify(
    page.tickets.flatMap(({ userId, ticket }) =>
      ticket ? [{ user_id: userId, ticket, v: ticket.v ?? 0 }] : [],
    ),
  );
  const room = page.room;
  await withDb(() =>
    db.execute(sql`
      with t as (
        select * from jsonb_to_recordset(${tickets}::jsonb) as x(user_id text, ticket jsonb, v bigint)
      ), up as (
        insert into room_tickets (sale_id, user_id, ticket, v)
        select ${saleId}, user_id, ticket, v from t order by user_id
        on conflict (sale_id, user_id) do update set ticket = excluded.ticket, v = excluded.v
        where room_tickets.v < excluded.v
        returning 1
      )
      insert into room_records as r (sale_id, seed, seed_hash, fields, entries, v, through)
      values (${saleId}, ${page.seed}, ${page.seedHash}, ${JSON.stringify(room?.fields ?? {})}::jsonb,
        ${room?.entries ? JSON.stringify(room.entries) : null}::jsonb, ${Number(room?.fields.v ?? 0)}, ${page.through})
      on conflict (sale_id) do update set
        fields = case when excluded.v > r.v then excluded.fields else r.fields end,
        entries = case when excluded.v > r.v then coalesce(excluded.entries, r.entries) else r.entries end,
        v = greatest(r.v, excluded.v),
        through = greatest(r.through, excluded.through)`),
  );
}

export type RecordRow = {
  seed: string;
  seed_hash: string;
  fields: Record<string, string>;
  entries: string[] | null;
  v: string | number;
  through: string | number;
};

/**
 * Gives a room lost with Redis back from its record (room-restore.lua), before the rebuild writes the
 * sale's meta (so no step runs on a half-restored room): the tickets as last written, the line in the
 * order it had (the seal's draw order from the seed and the entries, then the later tickets by their
 * join number), the running admissions, the frontier, the cutoff, the seal and a pause's start; the
 * held units counted high (every admission's full hold) until the next tick counts them. "kept": the
 * room was not lost; "unrecorded": Postgres has no record of it (a sale from before records).
 */
export async function restoreRoom(
  deps: Pick<LifecycleDeps, "db" | "redis">,
  saleId: string,
  startsAt: number,
): Promise<"restored" | "kept" | "unrecorded"> {
  const [records, rows] = await withDb(() =>
    deps.db.transaction([
      sql`select seed, seed_hash, fields, entries, v, through from room_records where sale_id = ${saleId}`,
      sql`select user_id, ticket from room_tickets where sale_id = ${saleId}`,
    ]),
  );
  const record = (records as RecordRow[])[0];
  if (!record) return "unrecorded";
  const tickets = (rows as { user_id: string; ticket: StoredTicket }[]).map((r) => ({
    userId: r.user_id,
    t: r.ticket,
  }));
  const room = await roomFromRecord(record, tickets, startsAt);
  const restored = await restoreRoomState(deps.redis, saleId, crypto.randomUUID(), room);
  return restored ? "restored" : "kept";
}

/** The room's keys from its record: pure, so a test can hold the order it gives against the room's own. */
export async function roomFromRecord(
  record: RecordRow,
  tickets: { userId: string; t: StoredTicket }[],
  startsAt: number,
): Promise<RestoredRoom> {
  const f = record.fields ?? {};
  const byJoin = [...tickets].sort((a, b) => a.t.n - b.t.n);
  let line: string[];
  let late: string[] = [];
  if (f.sealed === "1") {
    // the seal's order again: the entries ranked by the seed, then every later ticket by its join number
    const userOf = new Map(tickets.map((x) => [x.t.id, x.userId]));
    const entries = record.entries ?? [];
    const early = new Set(entries);
    const ranked = (await drawOrder(record.seed, entries)).flatMap((id) => userOf.get(id) ?? []);
    line = [...ranked, ...byJoin.filter((x) => !early.has(x.t.id)).map((x) => x.userId)];
    const position = new Map(line.map((u, i) => [u, i + 1]));
    for (const x of tickets) x.t.p = position.get(x.userId) ?? x.t.p;
  } else {
    line = byJoin.filter((x) => x.t.at < startsAt).map((x) => x.userId);
    late = byJoin.filter((x) => x.t.at >= startsAt).map((x) => x.userId);
  }
  const running = tickets.filter((x) => x.t.s === "a");
  const maxV = tickets.reduce((m, x) => Math.max(m, x.t.v ?? 0), 0);
  const fields: Record<string, string> = {
    seed: record.seed,
    seedHash: record.seed_hash,
    count: String(byJoin.at(-1)?.t.n ?? 0),
    seq: String(Math.max(Number(record.through), Number(record.v), maxV)),
    held: String(running.reduce((sum, x) => sum + x.t.h, 0)),
  };
  for (const name of ["v", "frontier", "cutoff", "sealed", "drawnAt", "entriesHash", "quietUntil"] as const)
    if (f[name] !== undefined) fields[name] = f[name];
  if (f.pausedAt !== undefined && f.pausedVersion !== undefined) {
    fields.pausedAt = f.pausedAt;
    fields.pausedVersion = f.pausedVersion;
  }
  return {
    fields,
    entries: record.entries,
    tickets: tickets.map((x) => [x.userId, JSON.stringify(x.t)]),
    line,
    late,
    active: running.map((x) => [x.userId, x.t.x]),
  };
}

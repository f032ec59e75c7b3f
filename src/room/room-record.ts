import { sql } from "drizzle-orm";
import { type Db, withDb } from "../db/client";
import { StoreUnavailableError } from "../errors";
import type { Deps, LifecycleDeps } from "../services";
import { saleKeys } from "../stock/keys";
import { type JournalPage, readRoomJournal } from "../stock/room-journal";
import { acknowledgeRoomJournal } from "../stock/room-journal-ack";
import { type RestoredRoom, restoreRoomState } from "../stock/room-restore";
import type { StoredTicket } from "../stock/room-step";
import { withRedis } from "../stores/with-redis";
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
 * The room's seed, recorded in Postgres before Redis has it (a sale's creation): the one made now, or the
 * one already recorded (a retried create). The record is `complete`: it holds the room from its opening.
 */
export async function recordRoomSeed(
  db: Db,
  saleId: string,
): Promise<{ seed: string; seedHash: string; gen: number }> {
  const seed = newSeed();
  const seedHash = await sha256Hex(seed);
  // on conflict do update (not do nothing): a creation racing another's uncommitted insert waits for it
  // and gets its row, never a seed Postgres does not hold
  const result = await withDb(() =>
    db.execute<{ seed: string; seed_hash: string; gen: number }>(sql`
      insert into room_records (sale_id, seed, seed_hash, complete) values (${saleId}, ${seed}, ${seedHash}, true)
      on conflict (sale_id) do update set seed = room_records.seed
      returning seed, seed_hash, gen`),
  );
  const row = result.rows[0];
  if (!row) throw new StoreUnavailableError("postgres", new Error(`room ${saleId}: no seed recorded`));
  return { seed: row.seed, seedHash: row.seed_hash, gen: Number(row.gen) };
}

/**
 * A room lost with Redis that its record cannot give back (a sale from before records: its record, if
 * any, began with a change after the deploy): the record starts again from nothing, with the seed it
 * has (else a new one) in a new life (`gen`), so what it held of the lost room is never restored later.
 */
export async function restartRoomRecord(
  db: Db,
  saleId: string,
): Promise<{ seed: string; seedHash: string; gen: number }> {
  const seed = newSeed();
  const seedHash = await sha256Hex(seed);
  const [, rows] = await withDb(() =>
    db.transaction([
      sql`delete from room_tickets where sale_id = ${saleId}`,
      sql`insert into room_records (sale_id, seed, seed_hash, complete) values (${saleId}, ${seed}, ${seedHash}, true)
          on conflict (sale_id) do update set fields = '{}'::jsonb, entries = null, v = 0, through = 0,
            gen = room_records.gen + 1, complete = true
          returning seed, seed_hash, gen`,
    ]),
  );
  const row = (rows as { seed: string; seed_hash: string; gen: number }[])[0];
  if (!row) throw new StoreUnavailableError("postgres", new Error(`room ${saleId}: no seed recorded`));
  return { seed: row.seed, seedHash: row.seed_hash, gen: Number(row.gen) };
}

/**
 * Returns once the room's journal is in Postgres up to `at.seq` in the room's life `at.gen` (a step's),
 * writing it if needed. In a process, one request writes at a time; the others wait on the position it
 * reaches (a number in memory, never its promise). 503 (StoreUnavailableError) when Postgres cannot take
 * it within {@link WAIT_MS}, or when the room was restored since the step (its life moved on: what the
 * step did was never written and is gone): nothing is shown that a loss could take back.
 */
export async function untilRoomRecorded(
  d: Pick<Deps, "db" | "redis" | "memory">,
  saleId: string,
  at: { seq: number; gen: number; recorded: number },
): Promise<void> {
  const known = d.memory.roomRecords;
  const deadline = Date.now() + WAIT_MS;
  let writesAtStart: number | undefined;
  for (;;) {
    const held = known.get(saleId);
    const mark = held && held.gen === at.gen ? held : { gen: at.gen, through: 0, writingSince: 0, writes: 0 };
    known.set(saleId, mark);
    writesAtStart ??= mark.writes;
    // what this process wrote is acknowledged in Redis before anything is shown: a Redis that says less
    // at the step lost writes (a failover to a replica behind), and its positions may be reissued; a
    // write of this process since the step read the Redis the step ran in
    if (mark.through >= at.seq && (at.recorded >= mark.through || mark.writes > writesAtStart)) return;
    if (Date.now() > deadline) {
      d.memory.roomRecordFailedAt.set(saleId, Date.now());
      throw new StoreUnavailableError("postgres", new Error(`room ${saleId}: journal not written`));
    }
    if (mark.writingSince > Date.now() - WRITER_LEASE_MS) {
      await new Promise((resolve) => setTimeout(resolve, 2));
      continue;
    }
    const started = Date.now();
    mark.writingSince = started;
    try {
      const written = await writeRoomJournal(d, saleId, mark.through);
      if (written.behind) {
        // Redis lost writes its record has (a failover): the room is given back from the record, and
        // what this step did, never written, is gone
        await restoreRoom(d, saleId, await startsAtOf(d, saleId), written.gen);
        throw new StoreUnavailableError("redis", new Error(`room ${saleId}: behind its record, restored`));
      }
      if (written.gen !== at.gen)
        throw new StoreUnavailableError("redis", new Error(`room ${saleId}: restored since the step`));
      mark.through = Math.max(mark.through, written.through);
      mark.writes++;
      d.memory.roomRecordFailedAt.delete(saleId);
    } catch (error) {
      // Postgres did not take it: admit nobody here for a while (a restore's 503 is not that)
      if (error instanceof StoreUnavailableError && error.store === "postgres")
        d.memory.roomRecordFailedAt.set(saleId, Date.now());
      throw error;
    } finally {
      // a writer past its lease does not clear the lease of the one that took over
      if (mark.writingSince === started) mark.writingSince = 0;
    }
  }
}

/**
 * Whether this process failed to write the room's journal in the last few seconds (Postgres down or
 * slow): its steps then admit nobody (room-step.lua ARGV[8]), so no admission's window runs while its
 * shopper cannot be shown it.
 */
export function roomRecordFailing(d: Pick<Deps, "memory">, saleId: string): boolean {
  const at = d.memory.roomRecordFailedAt.get(saleId);
  return at !== undefined && Date.now() - at < FAILING_MS;
}

/** How long after a failed write of a room's journal this process's steps admit nobody. */
const FAILING_MS = 5_000;

/**
 * Writes the oldest page of the room's journal to Postgres in one statement (the tickets, each only
 * over an older reading of itself; the room's fields likewise) and forgets what it wrote. Returns the
 * room's life and the journal position up to which everything of that life is written; a page of a
 * life the record has moved past (read before a loss, written after the restore) is not written, nor one
 * of a room behind its record (`behind`). An empty page costs no statement unless Redis's position is
 * below `known` (what the caller knows written: Redis lost writes).
 */
export async function writeRoomJournal(
  d: Pick<Deps, "db" | "redis">,
  saleId: string,
  known = 0,
): Promise<{ gen: number; through: number; behind?: boolean }> {
  const page = await readRoomJournal(d.redis, saleId, PAGE);
  if (!page) return { gen: -1, through: 0 };
  // nothing to write, and Redis is not behind what this process knows written: no statement
  const empty = page.tickets.length === 0 && !page.room && page.entries === null;
  if (empty && page.seq >= known) return { gen: page.gen, through: page.through };
  const written = await writePage(d.db, saleId, page);
  if (written === "stale") return { gen: -1, through: 0 };
  if (written === "behind") return { gen: page.gen, through: 0, behind: true };
  await acknowledgeRoomJournal(d.redis, saleId, page);
  return { gen: page.gen, through: page.through };
}

/** The sale's start as Redis holds it (the restore of a room found behind its record splits its line by it). */
async function startsAtOf(d: Pick<Deps, "redis">, saleId: string): Promise<number> {
  return Number(await withRedis(() => d.redis.hget<string>(saleKeys(saleId).meta, "startsAt")));
}

/**
 * The page's statement. The record's row is read first FOR SHARE: a restore (which moves `gen` on under
 * the row's lock) either waits for this write and reads it, or goes first and this write finds the new
 * life and writes nothing ("stale"). "behind": the record holds journal positions of this life past
 * where Redis is now (a failover lost writes that were written here): nothing written either.
 */
async function writePage(db: Db, saleId: string, page: JournalPage): Promise<"ok" | "stale" | "behind"> {
  const tickets = JSON.stringify(
    page.tickets.flatMap(({ userId, ticket }) =>
      ticket ? [{ user_id: userId, ticket, v: ticket.v ?? 0 }] : [],
    ),
  );
  const room = page.room;
  const result = await withDb(() =>
    db.execute<{ ok: boolean }>(sql`
      with g as (
        select gen, through from room_records where sale_id = ${saleId} for share
      ), ok as (
        select not exists (
          select 1 from g where gen > ${page.gen} or (gen = ${page.gen} and through > ${page.seq})
        ) as ok
      ), t as (
        select * from jsonb_to_recordset(${tickets}::jsonb) as x(user_id text, ticket jsonb, v bigint)
      ), up as (
        insert into room_tickets (sale_id, user_id, ticket, v)
        select ${saleId}, user_id, ticket, v from t where (select ok from ok) order by user_id
        on conflict (sale_id, user_id) do update set ticket = excluded.ticket, v = excluded.v
        where room_tickets.v < excluded.v
        returning 1
      ), rec as (
        insert into room_records as r (sale_id, seed, seed_hash, fields, entries, v, through, gen)
        select ${saleId}, ${page.seed}, ${page.seedHash}, ${JSON.stringify(room?.fields ?? {})}::jsonb,
          ${page.entries}::jsonb, ${Number(room?.fields.v ?? 0)}, ${page.through}, ${page.gen}
        where (select ok from ok)
        on conflict (sale_id) do update set
          fields = case when excluded.v > r.v then excluded.fields else r.fields end,
          -- the seal's entry list never changes: written once
          entries = coalesce(r.entries, excluded.entries),
          v = greatest(r.v, excluded.v),
          through = greatest(r.through, excluded.through)
        returning 1
      )
      select (select ok from ok) as ok, (select gen from g) > ${page.gen} as newer`),
  );
  const row = result.rows[0] as { ok: unknown; newer: unknown } | undefined;
  const yes = (v: unknown) => v === true || v === "t";
  if (yes(row?.ok)) return "ok";
  return yes(row?.newer) ? "stale" : "behind";
}

export type RecordRow = {
  gen?: number | string;
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
 * held units counted high (every admission's full hold) until the next tick counts them. The record's
 * life moves on first, under its row's lock (a journal write in flight either lands before the read or
 * writes nothing). "kept": the room was not lost; "unrecorded": its record cannot give it back (none, or
 * one begun after the room opened: a sale from before records).
 */
export async function restoreRoom(
  deps: Pick<LifecycleDeps, "db" | "redis">,
  saleId: string,
  startsAt: number,
  behindIn?: number,
): Promise<"restored" | "kept" | "unrecorded"> {
  if (behindIn === undefined && (await withRedis(() => deps.redis.hexists(saleKeys(saleId).room, "seed"))))
    return "kept";
  const [records, rows] = await withDb(() =>
    deps.db.transaction([
      sql`update room_records set gen = gen + 1
          where sale_id = ${saleId} and complete and (${behindIn ?? null}::int is null or gen = ${behindIn ?? null}::int)
          returning seed, seed_hash, fields, entries, v, through, gen`,
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
  const outcome = await restoreRoomState(deps.redis, saleId, crypto.randomUUID(), room, behindIn);
  if (outcome.kind === "restored") return "restored";
  // another rebuild restored it meanwhile: the record follows the life Redis has (unless that rebuild's
  // own move came later)
  await withDb(() =>
    deps.db.execute(
      sql`update room_records set gen = ${outcome.gen} where sale_id = ${saleId} and gen = ${Number(record.gen)}`,
    ),
  );
  return "kept";
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
    // everything restored is in Postgres
    recorded: String(Math.max(Number(record.through), Number(record.v), maxV)),
    gen: String(record.gen ?? 0),
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

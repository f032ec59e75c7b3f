import type { SaleRecord } from "../catalog/sale-record";
import { newTicketId } from "../ids";
import type { Deps } from "../services";
import { saleKeys } from "../stock/keys";
import { readLineBeforeSeal } from "../stock/room-line";
import { sealRoomLine } from "../stock/room-seal";
import { runRoomStep, type StepOutcome } from "../stock/room-step";
import { withRedis } from "../stores/with-redis";
import { drawOrder, entriesHash, sortedEntries } from "./draw";
import { roomRecordFailing, untilRoomRecorded } from "./room-record";

/** What a room step does besides promoting: a user joining, the user whose ticket to read, the paid units. */
export type StepInput = { join?: string; read?: string; paidUnits?: number };

/** After an admission's end, its hold is kept this long more: a buy checked just before the end still finds it. */
export function holdGraceMs(config: Deps["config"]): number {
  return config.BUY_RESOLVE_WINDOW_MS + 2_000;
}

/**
 * One step of a sale's waiting room at the store's `now`: the join (if any), lapses, admissions and
 * the cutoff in one script call; at the first step after the start, the line is sealed first (the
 * tickets taken before the start in draw order, src/room/draw.ts), then stepped. What it returns is in
 * the room's Postgres record before it is returned (src/room/room-record.ts).
 *
 * @example
 * const outcome = await stepRoom(d, sale, now, { join: userId, read: userId });
 */
export async function stepRoom(
  d: Deps,
  sale: SaleRecord,
  now: number,
  input: StepInput,
): Promise<StepOutcome> {
  const req = {
    saleId: sale.saleId,
    now,
    join: input.join ?? "",
    ticketId: newTicketId(),
    read: input.read ?? "",
    windowMs: d.config.ADMISSION_WINDOW_SECONDS * 1000,
    graceMs: holdGraceMs(d.config),
    paidUnits: input.paidUnits ?? -1,
    // while this process cannot write the room's journal, nobody is admitted (they could not be told)
    hold: roomRecordFailing(d, sale.saleId),
  };
  const first = await runRoomStep(d.redis, req);
  const outcome =
    first.kind !== "stepped" || first.room.sealed || now < sale.startsAt
      ? first
      : await sealRoom(d, sale.saleId, now).then(() => runRoomStep(d.redis, { ...req, join: "" }));
  // nothing the step shows is shown before Postgres holds it (a Redis loss must not take it back)
  if (outcome.kind === "stepped") await untilRoomRecorded(d, sale.saleId, outcome.room);
  return outcome;
}

/** How long one caller may take to seal before another may try (the seal itself is atomic either way). */
const SEAL_LEASE_MS = 5_000;

/**
 * Seals the line (room-seal.lua): reads the tickets taken before the start, ranks their ticket ids by
 * the draw's function of the room's seed, and writes that order, once; read again if a ticket joined
 * in between. One caller at a time (a lease): the steps that arrive meanwhile go on unsealed instead of
 * each reading and ranking the whole line at the sale's busiest moment.
 */
async function sealRoom(d: Deps, saleId: string, now: number): Promise<void> {
  const leased = await withRedis(() =>
    d.redis.set(saleKeys(saleId).sealing, String(now), { nx: true, px: SEAL_LEASE_MS }),
  );
  if (leased === null) return;
  for (let attempt = 0; attempt < 10; attempt++) {
    const line = await readLineBeforeSeal(d.redis, saleId);
    if (!line) return;
    const userOf = new Map(line.entries.map((e) => [e.ticketId, e.userId]));
    const entries = sortedEntries([...userOf.keys()]);
    const ranked = (await drawOrder(line.seed, entries)).map((t) => userOf.get(t) ?? "");
    const sealed = await sealRoomLine(d.redis, saleId, {
      now,
      entriesHash: await entriesHash(entries),
      entries,
      ranked,
    });
    if (sealed !== "line_changed") return;
  }
}

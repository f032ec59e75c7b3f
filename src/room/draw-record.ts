import type { Deps } from "../services";
import { saleKeys } from "../stock/keys";
import { toRecord } from "../stores/redis-reply";
import { withRedis } from "../stores/with-redis";
import { stepRoom } from "./room";
import { untilRoomRecorded } from "./room-record";
import { findSale, roomNow } from "./tickets";

/** The draw as published: the seed's hash from the creation; the seed, the entries and their hash after it. */
export type DrawView = {
  seedHash: string;
  entriesHash?: string;
  seed?: string;
  entries?: string[];
  drawnAt?: string;
};

export type DrawOutcome = { kind: "draw"; draw: DrawView } | { kind: "unknown_sale" } | { kind: "no_queue" };

/**
 * A queue or draw sale's draw record. After the start the room is stepped first, so the first read
 * after the start draws (seals) if nobody did yet.
 */
export async function readDraw(d: Deps, saleId: string): Promise<DrawOutcome> {
  const now = await roomNow(d);
  const sale = await findSale(d, saleId, now);
  if (!sale) return { kind: "unknown_sale" };
  if ((sale.admission ?? "open") === "open") return { kind: "no_queue" };
  if (now >= sale.startsAt) await stepRoom(d, sale, now, {});
  const k = saleKeys(saleId);
  const [room, entries] = await withRedis(() =>
    d.redis.pipeline().hgetall(k.room).get(k.entries).exec<[unknown, string | null]>(),
  );
  const fields = toRecord(room) ?? {};
  // shown only once in the room's Postgres record (another process may have sealed it moments ago)
  await untilRoomRecorded(d, saleId, {
    seq: Number(fields.seq ?? 0),
    gen: Number(fields.gen ?? 0),
    recorded: Number(fields.recorded ?? 0),
  });
  const draw: DrawView = { seedHash: fields.seedHash ?? "" };
  if (fields.sealed === "1") {
    draw.entriesHash = fields.entriesHash ?? "";
    draw.seed = fields.seed ?? "";
    draw.entries = entries ? (JSON.parse(entries) as string[]) : [];
    draw.drawnAt = new Date(Number(fields.drawnAt)).toISOString();
  }
  return { kind: "draw", draw };
}

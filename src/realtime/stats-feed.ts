import type { Deps } from "../context";
import { type Frame, frameOf, keepSame } from "../memory/frame";
import { createSharedSnapshot, type SharedSnapshot } from "../memory/shared-snapshot";
import { type SaleStats, saleStats } from "../recovery/sale-stats";
import { readTimeline, type TimelinePoint } from "../stock/timeline";

/** What the operator's live view shows of a sale: `GET …/stats` and `GET …/timeline`, as they answer. */
export type OperatorFigures = { stats: SaleStats; timeline: { points: TimelinePoint[]; serverTime: string } };

/**
 * The sales operators watch in this isolate or process, read through one feed: the stats (one Redis
 * MULTI and one SQL query per sale) and the timeline (one HGETALL) of every watched sale at most once
 * per `maxAgeMs`, whatever the number of operator pages open. It holds each sale's finished `stats` and
 * `timeline` events (frame.ts), serialized once per read.
 */
export type StatsFeed = SharedSnapshot<Frame>;

const feeds = new Map<number, StatsFeed>();

export function statsFeed(maxAgeMs: number): StatsFeed {
  let feed = feeds.get(maxAgeMs);
  if (!feed) {
    feed = createSharedSnapshot<Frame>({ maxAgeMs, merge: keepSame });
    feeds.set(maxAgeMs, feed);
  }
  return feed;
}

type Stores = Pick<Deps, "redis" | "db">;

/** One sale's figures, read at `now`. */
export async function readSaleFigures(d: Stores, saleId: string, now: number): Promise<OperatorFigures> {
  const [stats, timeline] = await Promise.all([saleStats(d, saleId), readTimeline(d.redis, saleId, now)]);
  return { stats, timeline };
}

/** The figures of the given sales as frames, read at `now` (a sale whose read fails is left out: kept as it was). */
export async function readFigureFrames(
  d: Stores,
  saleIds: string[],
  now: number,
): Promise<Map<string, Frame>> {
  const read = await Promise.allSettled(
    saleIds.map(async (id) => [id, figuresFrame(await readSaleFigures(d, id, now))] as const),
  );
  return new Map(read.flatMap((r) => (r.status === "fulfilled" ? [r.value] : [])));
}

/** The events of a figures value: `stats` and `timeline`, each written again only when it changed. */
export function figuresFrame(f: OperatorFigures): Frame {
  const stats = JSON.stringify(f.stats);
  return frameOf([
    { event: "stats", data: stats, key: stats },
    { event: "timeline", data: JSON.stringify(f.timeline), key: JSON.stringify(f.timeline.points) },
  ]);
}

import { type Frame, frameOf } from "../memory/frame";
import { type SaleStats, saleStats } from "../recovery/sale-stats";
import type { Deps } from "../services";
import { readTimeline, type TimelinePoint } from "../stock/timeline";

/** What the operator's live view shows of a sale: `GET …/stats` and `GET …/timeline`, as they answer. */
export type OperatorFigures = { stats: SaleStats; timeline: { points: TimelinePoint[]; serverTime: string } };

type Stores = Pick<Deps, "redis" | "db" | "memory">;

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

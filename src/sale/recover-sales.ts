import { sql } from "drizzle-orm";
import type { Deps } from "../context";
import { withDb } from "../db/client";
import { withRedis } from "../redis";
import { catalogKeys, saleKeys } from "./keys";
import { type RebuildReport, rebuildSale } from "./rebuild-sale";

const LOCK_KEY = "recovery:lock";
const LOCK_MS = 30_000;

/**
 * Notices that Redis lost sales it should hold (every sale in Postgres that has not ended must have its
 * meta hash in Redis) and rebuilds each from Postgres. One recovery at a time across isolates (a lock
 * key with a TTL); cheap when nothing is missing: one query and one pipeline of EXISTS.
 */
export async function recoverLostSales(
  deps: Pick<Deps, "redis" | "db" | "now" | "config">,
): Promise<RebuildReport[]> {
  const result = await withDb(() =>
    deps.db.execute<{ id: string }>(sql`select id from sales where ends_at > now() order by starts_at`),
  );
  const ids = result.rows.map((r) => r.id);
  const present = await withRedis(async () => {
    if (ids.length === 0) return [] as number[];
    const pipe = deps.redis.pipeline();
    for (const id of ids) pipe.exists(saleKeys(id).meta);
    return pipe.exec<number[]>();
  });
  const lost = ids.filter((_, i) => Number(present[i]) === 0);
  const catalogMissing = (await withRedis(() => deps.redis.exists(catalogKeys.version))) === 0;
  if (lost.length === 0 && !(catalogMissing && ids.length > 0)) return [];
  const token = crypto.randomUUID();
  const locked = await withRedis(() => deps.redis.set(LOCK_KEY, token, { nx: true, px: LOCK_MS }));
  if (locked !== "OK") return [];
  try {
    const reports: RebuildReport[] = [];
    for (const id of lost) {
      const report = await rebuildSale(deps, id, deps.config.RECOVERY_QUIET_SECONDS);
      if (report) {
        console.warn(
          `recovered sale ${id} from Postgres: epoch ${report.epoch}, remaining ${report.remaining}`,
        );
        reports.push(report);
      }
    }
    return reports;
  } finally {
    if ((await deps.redis.get(LOCK_KEY).catch(() => null)) === token)
      await deps.redis.del(LOCK_KEY).catch(() => 0);
  }
}

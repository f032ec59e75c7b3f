import { sql } from "drizzle-orm";
import { registerProductTokens } from "../catalog/catalog";
import { withDb } from "../db/client";
import type { RebuildDeps } from "../services";
import { catalogKeys, saleKeys } from "../stock/keys";
import { releaseLock } from "../stock/lock";
import { withRedis } from "../stores/with-redis";
import { type RebuildReport, rebuildSale } from "./rebuild";

const LOCK_KEY = catalogKeys.restoring;
const LOCK_MS = 30_000;
/** At most one recovery attempt per isolate in this interval, however many requests notice a loss. */
export const RECOVERY_DEBOUNCE_MS = 5_000;
/** An ended sale is still rebuilt this long after its end (its stats, reconciliation, late restores). */
const KEEP_ENDED_HOURS = 1;

/**
 * Notices that Redis lost sales it should hold and rebuilds each from Postgres. A sale Redis should
 * hold is one that has not ended (or ended within the hour), or that still has orders whose units Redis
 * must take back (unpaid, or expired/cancelled and not restored yet). A sale is there when its meta
 * hash has its epoch (a hash holding only a stray flag is not a sale); for the cron (`force`), also at
 * the epoch Postgres gives it (a rebuild that died half-way left Redis a generation behind). One recovery
 * at a time across isolates (a lock key with a TTL, taken only once the check finds work, which is
 * repeated under it), and, unless `force` (the cron), one attempt per isolate every
 * {@link RECOVERY_DEBOUNCE_MS}: during an outage every refused request asks for one. The catalog is
 * checked against Postgres too: a held sale it does not list (the catalog lost with its store, whatever
 * registered since) is registered again first, and a sale it lists that Redis lost but Postgres no longer
 * holds (ended) is rebuilt as well. Cheap when nothing is missing: one query and one pipeline
 * (each held sale's epoch and membership, the catalog's ids), then one HGET per sale only the catalog lists.
 */
export async function recoverLostSales(
  deps: RebuildDeps,
  opts: { force?: boolean; catalogOnly?: boolean } = {},
): Promise<RebuildReport[]> {
  const now = deps.now;
  // when this process last started an attempt: a finished value, never a promise shared across requests
  const memory = deps.memory.recovery;
  if (!opts.force && now - memory.lastAttemptAt < RECOVERY_DEBOUNCE_MS) return [];
  memory.lastAttemptAt = now;
  // checked without the lock (the lock key is also the catalog's "being restored" flag: a check that
  // finds nothing must not raise it), then again under it: a recovery that checked, then took the lock
  // another had just released, would rebuild again what that one rebuilt (a second epoch and quiet period)
  if (!(await survey(deps, opts))) return [];
  const token = crypto.randomUUID();
  const locked = await withRedis(() => deps.redis.set(LOCK_KEY, token, { nx: true, px: LOCK_MS }));
  if (locked !== "OK") return [];
  try {
    const found = await survey(deps, opts);
    return found ? await recover(deps, found) : [];
  } finally {
    await releaseLock(deps.redis, LOCK_KEY, token).catch(() => false);
  }
}

type Found = { lost: string[]; unlisted: { id: string; product_token: string }[] };

/**
 * {@link recoverLostSales}' check: the sales Redis lost (or, for the cron, holds a generation behind)
 * and the held sales the catalog does not list; null when there is nothing to do.
 */
async function survey(
  deps: RebuildDeps,
  opts: { force?: boolean; catalogOnly?: boolean },
): Promise<Found | null> {
  const result = await withDb(() =>
    deps.db.execute<{ id: string; epoch: number; product_token: string }>(sql`
      select s.id, s.epoch, s.product_token from sales s
      where s.ends_at > now() - make_interval(hours => ${KEEP_ENDED_HOURS})
         or exists (select 1 from orders o where o.sale_id = s.id and o.status = 'awaiting_payment')
         or exists (select 1 from orders o where o.sale_id = s.id and o.status in ('expired', 'cancelled')
                    and o.restored_at is null)
      order by s.starts_at`),
  );
  const ids = result.rows.map((r) => r.id);
  // one pipeline: each held sale's epoch and whether the catalog lists it; the catalog's version and ids
  const [epochs, listed, version, catalogIds] = await withRedis(async () => {
    const pipe = deps.redis.pipeline();
    for (const id of ids) pipe.hget(saleKeys(id).meta, "epoch");
    for (const id of ids) pipe.sismember(catalogKeys.sales, id);
    const replies = await pipe.get(catalogKeys.version).smembers(catalogKeys.sales).exec<unknown[]>();
    return [
      replies.slice(0, ids.length) as (string | null)[],
      replies.slice(ids.length, 2 * ids.length) as number[],
      replies[2 * ids.length] as string | null,
      replies[2 * ids.length + 1] as string[],
    ] as const;
  });
  // lost: no epoch in Redis. Behind (the cron only): Postgres moved to a newer epoch than Redis holds, a
  // rebuild that died between its transaction and its script; order writes wait for that epoch forever
  const lost = ids.filter((_, i) => {
    const inRedis = epochs[i];
    if (inRedis === null || inRedis === undefined) return true;
    return opts.force === true && Number(inRedis) < Number(result.rows[i]?.epoch ?? 0);
  });
  // a held sale the catalog does not list: the catalog was lost (with its store), whether or not a
  // registration since made its version again
  // (only sales Redis holds: a sale without its keys is rebuilt below, and registers itself, or is still
  // being created, and registers itself once its keys are written)
  const unlisted = result.rows.filter((_, i) => !listed[i] && epochs[i] !== null && epochs[i] !== undefined);
  // the catalog alone (before a registration): no sale is rebuilt, one being created among them
  if (opts.catalogOnly) lost.length = 0;
  // a sale the catalog lists but Postgres no longer holds (ended), lost with its store: rebuilt too, or
  // its readers would be told it is being restored for ever
  const held = new Set(ids);
  const listedOnly = opts.catalogOnly ? [] : catalogIds.filter((id) => !held.has(id));
  const listedEpochs = await withRedis(async () => {
    if (listedOnly.length === 0) return [] as (string | null)[];
    const pipe = deps.redis.pipeline();
    for (const id of listedOnly) pipe.hget(saleKeys(id).meta, "epoch");
    return pipe.exec<(string | null)[]>();
  });
  lost.push(...listedOnly.filter((_, i) => listedEpochs[i] === null || listedEpochs[i] === undefined));
  // no sale to hold and no catalog (a new shop, or one whose sales all ended): an empty catalog is the
  // whole catalog, so readers of unknown ids are answered 404 again (a sale created meanwhile INCRs it)
  if (version === null && ids.length === 0 && lost.length === 0) {
    await withRedis(() => deps.redis.set(catalogKeys.version, "0", { nx: true }));
    return null;
  }
  if (lost.length === 0 && unlisted.length === 0) return null;
  return { lost, unlisted };
}

/** {@link recoverLostSales}' work, under its lock: the catalog completed, then each lost sale rebuilt. */
async function recover(deps: RebuildDeps, { lost, unlisted }: Found): Promise<RebuildReport[]> {
  // the catalog first, every held sale in it (one filter rebuild): a sale still being rebuilt is then
  // answered 503 (its keys missing), never 404 (its token unknown)
  await registerProductTokens(
    deps,
    unlisted.map((r) => ({ saleId: r.id, token: r.product_token })),
  );
  if (unlisted.length > 0)
    console.warn(`catalog: registered ${unlisted.length} sales Redis holds that it did not list`);
  const reports: RebuildReport[] = [];
  let failure: unknown = null;
  for (const id of lost) {
    // one sale whose rebuild fails must not hold back the others; the first failure is rethrown
    const report = await rebuildSale(deps, id, deps.config.RECOVERY_QUIET_SECONDS).catch((error) => {
      failure ??= error;
      console.error(`recovery of sale ${id} failed; the others go on`, error);
      return null;
    });
    if (report) {
      console.warn(
        `recovered sale ${id} from Postgres: epoch ${report.epoch}, remaining ${report.remaining}`,
      );
      reports.push(report);
    }
  }
  if (failure !== null) throw failure;
  return reports;
}

/**
 * Before a registration makes the catalog's version again (a new sale, an operator's rebuild): when the
 * catalog is lost, every held sale Redis still holds is registered first, or the new version would hide
 * the loss and leave their tokens unknown (404) until the sweep. It rebuilds nothing: a sale without its
 * keys may be one being created right now (the sweep and the requests that meet a lost sale rebuild it).
 */
export async function recoverCatalogFirst(deps: RebuildDeps): Promise<void> {
  if ((await withRedis(() => deps.redis.exists(catalogKeys.version))) === 0)
    await recoverLostSales(deps, { force: true, catalogOnly: true });
}

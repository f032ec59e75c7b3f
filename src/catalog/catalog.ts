import { BloomFilter } from "bloom-filters";
import { StoreUnavailableError } from "../errors";
import type { LoadedCatalog as Loaded, Memory } from "../memory/memory";
import { catalogKeys } from "../stock/keys";
import type { RedisStore as Redis } from "../stores/redis-store";
import { withRedis } from "../stores/with-redis";
import { EXACT_CATALOG_MAX, loadExact } from "./exact-catalog";

type CatalogMemory = Memory["catalog"];
const FALSE_POSITIVE_RATE = 0.001;

/**
 * Redis has no catalog at all: it lost its data (or was never set up). Answered 503, never 404: a
 * live sale's token must not look unknown while its state is being rebuilt from Postgres.
 */
export class CatalogMissingError extends StoreUnavailableError {
  override name = "CatalogMissingError";
  constructor() {
    super("redis", new Error("catalog missing in Redis"));
  }
}

const NEGATIVE_TTL_MS = 5_000;

/**
 * Builds the Bloom filter of every product token (bloom-filters), sized for twice the tokens it holds
 * at a 0.1 % false-positive rate, and serialises it for Redis.
 */
export function buildTokenFilter(tokens: string[]): string {
  const filter = BloomFilter.create(Math.max(1024, tokens.length * 2), FALSE_POSITIVE_RATE);
  for (const token of tokens) filter.add(token);
  return JSON.stringify(filter.saveAsJSON());
}

/** Reads a filter written by {@link buildTokenFilter}. */
export function parseTokenFilter(json: string): BloomFilter {
  return BloomFilter.fromJSON(JSON.parse(json)) as BloomFilter;
}

/** Shape check only (43 base64url characters, see product-token.ts): anything else is unknown. */
function looksLikeProductToken(token: string): boolean {
  return /^[A-Za-z0-9_-]{43}$/.test(token);
}

async function load(redis: Redis, now: number): Promise<Loaded> {
  const [bloom, version, restoring, count] = await withRedis(() =>
    redis
      .pipeline()
      .get<string>(catalogKeys.bloom)
      .get<string>(catalogKeys.version)
      .get<string>(catalogKeys.restoring)
      .hlen(catalogKeys.tokens)
      .exec<[string | null, string | null, string | null, number]>(),
  );
  if (version === null) throw new CatalogMissingError();
  const filter = bloom ? parseTokenFilter(bloom) : null;
  const partial = restoring !== null;
  // a catalog read mid-restore is not exact; a token map shorter than the count read with it lost data
  const tokens = Number(count);
  const exact = !partial && tokens <= EXACT_CATALOG_MAX ? await loadExact(redis) : null;
  return { filter, version, checkedAt: now, partial, exact: exact && exact.size >= tokens ? exact : null };
}

/** Makes a finished load the isolate's catalog (the tokens it resolved belong to the old one). */
function publish(memory: CatalogMemory, next: Loaded): Loaded {
  memory.loaded = next;
  memory.resolved.clear();
  return next;
}

/**
 * The isolate's catalog. A cold isolate's concurrent first requests each load it themselves (no request
 * waits on another request's I/O: workerd cancels such requests) and the first finished load is kept.
 */
async function ensureLoaded(redis: Redis, memory: CatalogMemory, now: number): Promise<Loaded> {
  if (memory.loaded) return memory.loaded;
  const fresh = await load(redis, now);
  return memory.loaded ?? publish(memory, fresh);
}

/**
 * Checks, off the request's critical path (in its own `waitUntil`), whether an operator changed the
 * catalog since the isolate loaded it (one pipeline every `refreshMs` per isolate: the version, and
 * whether a restore runs) and publishes the reloaded catalog once it is loaded. A catalog that may miss
 * sales (`partial`) is loaded again once no restore runs, whatever its version: after a loss the version
 * starts over and may come back to the one held. The first request to notice claims the check; the
 * others go on with the catalog they have.
 */
async function refreshIfStale(
  redis: Redis,
  memory: CatalogMemory,
  now: number,
  refreshMs: number,
): Promise<void> {
  const current = memory.loaded;
  if (!current || now - current.checkedAt < refreshMs) return;
  current.checkedAt = now;
  const [version, restoring] = await redis
    .pipeline()
    .get<string>(catalogKeys.version)
    .get<string>(catalogKeys.restoring)
    .exec<[string | null, string | null]>()
    .catch(() => [undefined, undefined] as const);
  if (memory.loaded !== current || version === undefined) return;
  if (version === current.version && !(current.partial && restoring === null)) return;
  if (version === null) {
    memory.loaded = null;
    return;
  }
  const next = await load(redis, now).catch(() => null);
  if (next && memory.loaded === current) publish(memory, next);
}

/**
 * Looks a token up in Redis (one pipeline: HGET, whether lost sales are being restored, and whether the
 * catalog is there at all). Unknown while the catalog is lost or being restored is not an answer: its
 * sale may not be registered again yet (503, never 404), and the process's catalog is then held as one
 * that may miss sales ({@link noticeCatalogLoss}).
 */
async function lookUp(
  redis: Redis,
  memory: CatalogMemory,
  token: string,
  now: number,
): Promise<string | null> {
  const [saleId, restoring, version] = await withRedis(() =>
    redis
      .pipeline()
      .hget<string>(catalogKeys.tokens, token)
      .get<string>(catalogKeys.restoring)
      .get<string>(catalogKeys.version)
      .exec<[string | null, string | null, string | null]>(),
  );
  if (saleId === null && (restoring !== null || version === null)) {
    noticeCatalogLoss(memory);
    throw new CatalogMissingError();
  }
  memory.resolved.set(token, { saleId: saleId ?? null, until: now + NEGATIVE_TTL_MS });
  return saleId ?? null;
}

/**
 * Resolves a product token to its sale id. A token not of the shape, or not in the process's Bloom
 * filter, is answered `null` without touching Redis; a token that passes the filter is looked up once
 * per process (one HGET, not a stock command) and remembered. A catalog loaded while lost sales were
 * being restored may miss their tokens: a miss then asks Redis too, and is 503 while the restore runs.
 *
 * @param d.defer schedules background work (`ctx.waitUntil`)
 */
export async function resolveProductToken(
  d: { redis: Redis; memory: Pick<Memory, "catalog">; defer: (p: Promise<unknown>) => void },
  token: string,
  opts: { now: number; refreshMs: number },
): Promise<string | null> {
  if (!looksLikeProductToken(token)) return null;
  const memory = d.memory.catalog;
  const catalog = await ensureLoaded(d.redis, memory, opts.now);
  d.defer(refreshIfStale(d.redis, memory, opts.now, opts.refreshMs));
  const inMemory = knownSaleOf(memory, catalog, token, opts.now);
  if (inMemory !== undefined) return inMemory;
  return lookUp(d.redis, memory, token, opts.now);
}

/**
 * A token's sale as the process knows it, without Redis: its sale id (resolved before), null (not of the
 * shape, not in the Bloom filter, or looked up and unknown within the last 5 s: a 404), or undefined
 * (it passes the filter, or the catalog was loaded mid-restore: one lookup decides).
 */
function knownSaleOf(
  memory: CatalogMemory,
  catalog: Loaded,
  token: string,
  now: number,
): string | null | undefined {
  const exact = catalog.exact?.get(token);
  if (exact !== undefined) return exact;
  if (catalog.exact && !catalog.partial) return null;
  const known = memory.resolved.get(token);
  if (known?.saleId) return known.saleId;
  if (!catalog.filter?.has(token) && !catalog.partial) return null;
  if (known && known.until > now) return known.saleId;
  return undefined;
}

/**
 * {@link resolveProductToken} from memory alone, for answers that must cost no I/O: undefined whenever
 * the process has no catalog, its catalog is due for its freshness check (`refreshMs`), or the token
 * needs its HGET; the caller then takes the full path, which does those.
 */
export function resolveFromMemory(
  memory: Pick<Memory, "catalog">,
  token: string,
  opts: { now: number; refreshMs: number },
): string | null | undefined {
  const catalog = memory.catalog.loaded;
  if (!catalog || opts.now - catalog.checkedAt >= opts.refreshMs) return undefined;
  if (!looksLikeProductToken(token)) return null;
  return knownSaleOf(memory.catalog, catalog, token, opts.now);
}

/**
 * This process saw Redis lose data (a sale's state gone: NOT_INITIALISED; the catalog gone or being
 * restored): the catalog it holds may miss sales being restored, so a token missing from it is looked up
 * (503 while the catalog is lost or restored, see {@link lookUp}) instead of answered 404 from memory,
 * until the catalog is loaded again; the misses it remembered are forgotten.
 */
export function noticeCatalogLoss(memory: CatalogMemory): void {
  const loaded = memory.loaded;
  if (loaded?.partial) return;
  if (loaded) loaded.partial = true;
  for (const [token, known] of memory.resolved) if (known.saleId === null) memory.resolved.delete(token);
}

/** Forgets the process's catalog (after an operator change made here). */
export function forgetCatalog(memory: Pick<Memory, "catalog">): void {
  memory.catalog.loaded = null;
  memory.catalog.resolved.clear();
}

/**
 * Registers a sale's token and republishes the Bloom filter of all tokens. Concurrent registrations
 * each rebuild from the full token hash; a rebuild that raced another is repeated until the filter
 * covers every token it read.
 */
export async function registerProductToken(
  d: { redis: Redis; memory: Pick<Memory, "catalog"> },
  saleId: string,
  token: string,
): Promise<void> {
  await registerProductTokens(d, [{ saleId, token }]);
}

/** Registers several sales' tokens at once (one filter rebuild), as {@link registerProductToken}. */
export async function registerProductTokens(
  d: { redis: Redis; memory: Pick<Memory, "catalog"> },
  sales: { saleId: string; token: string }[],
): Promise<void> {
  const { redis } = d;
  if (sales.length === 0) return;
  await withRedis(async () => {
    await redis
      .pipeline()
      .hset(catalogKeys.tokens, Object.fromEntries(sales.map((s) => [s.token, s.saleId])))
      .sadd(catalogKeys.sales, ...(sales.map((s) => s.saleId) as [string, ...string[]]))
      .exec();
    for (let attempt = 0; attempt < 5; attempt++) {
      const tokens = await redis.hkeys(catalogKeys.tokens);
      await redis
        .pipeline()
        .set(catalogKeys.bloom, buildTokenFilter(tokens))
        .incr(catalogKeys.version)
        .exec();
      if ((await redis.hlen(catalogKeys.tokens)) === tokens.length) break;
    }
  });
  forgetCatalog(d.memory);
}

import type { BloomFilter } from "bloom-filters";
import { StoreUnavailableError } from "../errors";
import { catalogKeys } from "../stock/keys";
import type { RedisStore as Redis } from "../stores/redis-store";
import { withRedis } from "../stores/with-redis";
import { buildTokenFilter, parseTokenFilter } from "./token-filter";

type Loaded = { filter: BloomFilter | null; version: string; checkedAt: number };

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
type Resolved = { saleId: string | null; until: number };

const NEGATIVE_TTL_MS = 5_000;
let loaded: Loaded | null = null;
const resolved = new Map<string, Resolved>();

async function load(redis: Redis, now: number): Promise<Loaded> {
  const [bloom, version] = await withRedis(() =>
    redis
      .pipeline()
      .get<string>(catalogKeys.bloom)
      .get<string>(catalogKeys.version)
      .exec<[string | null, string | null]>(),
  );
  if (version === null) throw new CatalogMissingError();
  return { filter: bloom ? parseTokenFilter(bloom) : null, version, checkedAt: now };
}

/** Makes a finished load the isolate's catalog (the tokens it resolved belong to the old one). */
function publish(next: Loaded): Loaded {
  loaded = next;
  resolved.clear();
  return next;
}

/**
 * The isolate's catalog. A cold isolate's concurrent first requests each load it themselves (no request
 * waits on another request's I/O: workerd cancels such requests) and the first finished load is kept.
 */
async function ensureLoaded(redis: Redis, now: number): Promise<Loaded> {
  if (loaded) return loaded;
  const fresh = await load(redis, now);
  return loaded ?? publish(fresh);
}

/**
 * Checks, off the request's critical path (in its own `waitUntil`), whether an operator changed the
 * catalog since the isolate loaded it (one GET every `refreshMs` per isolate) and publishes the reloaded
 * catalog once it is loaded. The first request to notice claims the check; the others go on with the
 * catalog they have.
 */
async function refreshIfStale(redis: Redis, now: number, refreshMs: number): Promise<void> {
  const current = loaded;
  if (!current || now - current.checkedAt < refreshMs) return;
  current.checkedAt = now;
  const version = await redis.get<string>(catalogKeys.version).catch(() => undefined);
  if (loaded !== current || version === undefined || version === current.version) return;
  if (version === null) {
    loaded = null;
    return;
  }
  const next = await load(redis, now).catch(() => null);
  if (next && loaded === current) publish(next);
}

/**
 * Resolves a product token to its sale id. Tokens not in the isolate's Bloom filter are answered
 * `null` without touching Redis; a token that passes the filter is looked up once per isolate (one
 * HGET, not a stock command) and remembered.
 *
 * @param defer schedules background work (`ctx.waitUntil`)
 */
export async function resolveProductToken(
  redis: Redis,
  token: string,
  opts: { now: number; refreshMs: number; defer: (p: Promise<unknown>) => void },
): Promise<string | null> {
  const catalog = await ensureLoaded(redis, opts.now);
  opts.defer(refreshIfStale(redis, opts.now, opts.refreshMs));
  const known = resolved.get(token);
  if (known?.saleId) return known.saleId;
  if (!catalog.filter?.has(token)) return null;
  if (known && known.until > opts.now) return known.saleId;
  const saleId = await withRedis(() => redis.hget<string>(catalogKeys.tokens, token));
  resolved.set(token, { saleId: saleId ?? null, until: opts.now + NEGATIVE_TTL_MS });
  return saleId ?? null;
}

/** Forgets the isolate's catalog (tests; an operator change in this isolate). */
export function forgetCatalog(): void {
  loaded = null;
  resolved.clear();
}

/**
 * Registers a sale's token and republishes the Bloom filter of all tokens. Concurrent registrations
 * each rebuild from the full token hash; a rebuild that raced another is repeated until the filter
 * covers every token it read.
 */
export async function registerProductToken(redis: Redis, saleId: string, token: string): Promise<void> {
  await withRedis(async () => {
    await redis
      .pipeline()
      .hset(catalogKeys.tokens, { [token]: saleId })
      .sadd(catalogKeys.sales, saleId)
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
  forgetCatalog();
}

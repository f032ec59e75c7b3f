import calculateSlot from "cluster-key-slot";
import type { RedisPipeline, RedisStore } from "./redis-store";

/**
 * One {@link RedisStore} over several (e.g. several Upstash databases on Workers), placed as a Redis
 * Cluster places keys: a key's hash slot (CRC16 of its hash tag, `cluster-key-slot`) picks the store
 * owning that slot's share of the 16,384 slots. Every key of a sale shares the tag `{s:<saleId>}` and the
 * catalog's keys `{catalog}` (src/stock/keys.ts), so a sale lives whole in one store: a buy stays one
 * script on one store, a MULTI stays one store's transaction. `TIME` on its own is read on the store of
 * the `{clock}` slot, so every process reads one clock; in a pipeline or MULTI it is read in the batch of
 * its first keyed command (a sale's reading and its clock from one server, as on a Cluster). A pipeline
 * spanning stores is sent as one pipeline per store, in parallel, its replies put back in order; when a
 * store's batch fails it rejects with that batch's error (of the store whose first command comes first,
 * its "Command N" counted within that store's share): callers treat any failure as the store's. DEL and
 * EXISTS of keys in several stores are sent to each and their counts added.
 *
 * The number of stores is part of where every sale lives: changing it moves sales to other stores,
 * where they are found missing and rebuilt from Postgres (the Redis-loss path). Change it between drops.
 *
 * @example
 * const redis = shardedStore([upstashA, upstashB, upstashC]);
 * await redis.evalsha(sha, [saleKeys(id).stock, …], args); // the store of {s:<id>}
 */
export function shardedStore(stores: RedisStore[]): RedisStore {
  if (stores.length === 0) throw new Error("shardedStore needs at least one store");
  const at = (key: unknown) => stores[storeIndexOf(String(key), stores.length)] as RedisStore;
  const clock = at(CLOCK_KEY);
  const sharded: Record<string, unknown> = {};
  for (const method of Object.keys(STORE_KEYED)) {
    sharded[method] = (...args: unknown[]) =>
      (at(args[0]) as unknown as Record<string, (...a: unknown[]) => unknown>)[method]?.(...args);
  }
  // DEL and EXISTS of keys in several stores: each store counts its own keys
  const counted =
    (method: "del" | "exists") =>
    async (...keys: string[]) => {
      const byStore = new Map<number, string[]>();
      for (const key of keys) {
        const i = storeIndexOf(key, stores.length);
        byStore.set(i, [...(byStore.get(i) ?? []), key]);
      }
      const counts = await Promise.all(
        [...byStore].map(([i, own]) => (stores[i] as RedisStore)[method](...own)),
      );
      return counts.reduce((sum, n) => sum + n, 0);
    };
  sharded.del = counted("del");
  sharded.exists = counted("exists");
  return Object.assign(sharded as Omit<RedisStore, "pipeline" | "multi" | "evalsha" | "eval" | "time">, {
    time: () => clock.time(),
    pipeline: () => shardedPipeline(stores, (store) => store.pipeline()),
    multi: () => shardedPipeline(stores, (store) => store.multi(), true),
    evalsha: ((sha1: string, keys: string[], args: unknown[]) =>
      at(keys[0] ?? CLOCK_KEY).evalsha(sha1, keys, args)) as RedisStore["evalsha"],
    eval: ((lua: string, keys: string[], args: unknown[]) =>
      at(keys[0] ?? CLOCK_KEY).eval(lua, keys, args)) as RedisStore["eval"],
  });
}

/** Where keyless commands (TIME, a script without keys) go: one fixed slot, as on a Cluster. */
const CLOCK_KEY = "{clock}";
const SLOTS = 16_384;

/** The store holding `key`: the one owning its slot when the slots are cut into `count` equal ranges. */
export function storeIndexOf(key: string, count: number): number {
  return Math.floor((calculateSlot(key) * count) / SLOTS);
}

/** The keyed commands both a store and a pipeline have; then each one's own (the batches, scripts and TIME apart). */
const KEYED_BOTH = {
  get: true,
  set: true,
  del: true,
  incr: true,
  hget: true,
  hgetall: true,
  hmget: true,
  hset: true,
  hdel: true,
  hexists: true,
  hkeys: true,
  hlen: true,
  hscan: true,
  sadd: true,
  smembers: true,
  sismember: true,
  zrem: true,
} as const;
const STORE_KEYED: Record<
  Exclude<keyof RedisStore, "pipeline" | "multi" | "evalsha" | "eval" | "time">,
  true
> = { ...KEYED_BOTH, exists: true, zrange: true };
const PIPELINE_KEYED: Record<Exclude<keyof RedisPipeline, "exec" | "time">, true> = {
  ...KEYED_BOTH,
  hincrby: true,
  expire: true,
};

type Queued = { method: string; args: unknown[]; store: number };
/** A queued command with no key (TIME): placed at `exec`, with the batch's first keyed command. */
const KEYLESS = -1;

/**
 * A pipeline (or with `atomic`, a MULTI) that queues its commands with their stores and sends one batch
 * per store at `exec`. A MULTI spanning stores is refused before anything is sent: a transaction's keys
 * are one sale's, in one store.
 */
function shardedPipeline(
  stores: RedisStore[],
  open: (store: RedisStore) => RedisPipeline,
  atomic = false,
): RedisPipeline {
  const queued: Queued[] = [];
  const builder = {} as RedisPipeline;
  const clockStore = storeIndexOf(CLOCK_KEY, stores.length);
  for (const method of Object.keys(PIPELINE_KEYED)) {
    (builder as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
      queued.push({ method, args, store: storeIndexOf(String(args[0]), stores.length) });
      return builder;
    };
  }
  builder.time = () => {
    // TIME rides in the batch of the first keyed command (a MULTI's TIME is its transaction's clock),
    // in the {clock} slot's store when there is none
    queued.push({ method: "time", args: [], store: KEYLESS });
    return builder;
  };
  builder.exec = async <T extends unknown[]>() => {
    if (queued.length === 0) throw new Error("Pipeline is empty");
    const first = queued.find((q) => q.store !== KEYLESS)?.store ?? clockStore;
    for (const q of queued) if (q.store === KEYLESS) q.store = first;
    const byStore = new Map<number, number[]>();
    for (const [i, q] of queued.entries()) {
      const group = byStore.get(q.store);
      if (group) group.push(i);
      else byStore.set(q.store, [i]);
    }
    if (atomic && byStore.size > 1) throw new Error("A transaction's keys must live in one store");
    const groups = [...byStore.entries()];
    const sent = await Promise.allSettled(
      groups.map(([store, indexes]) => {
        const batch = open(stores[store] as RedisStore) as unknown as Record<
          string,
          (...a: unknown[]) => unknown
        >;
        for (const i of indexes) {
          const q = queued[i] as Queued;
          batch[q.method]?.(...q.args);
        }
        return (batch as unknown as RedisPipeline).exec();
      }),
    );
    const replies: unknown[] = new Array(queued.length);
    let failure: { first: number; error: unknown } | null = null;
    sent.forEach((batch, g) => {
      const indexes = (groups[g] as [number, number[]])[1];
      if (batch.status === "rejected") {
        if (failure === null || (indexes[0] as number) < failure.first)
          failure = { first: indexes[0] as number, error: batch.reason };
        return;
      }
      indexes.forEach((at, i) => {
        replies[at] = batch.value[i];
      });
    });
    if (failure !== null) throw (failure as { error: unknown }).error;
    return replies as T;
  };
  return builder;
}

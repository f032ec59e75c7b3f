/**
 * The Redis the engine uses: exactly the commands `src/` sends, with the reply shapes of the
 * `@upstash/redis` client running with `automaticDeserialization: false` (the shapes the code relies on
 * today). The Upstash REST client satisfies it as it is (see test/integration/stores/redis-store.test.ts);
 * {@link ./redis-tcp.ts} implements it over one TCP connection for server runtimes.
 *
 * Reply shapes, the same from every adapter:
 * - strings stay strings (never JSON-parsed), integers are numbers, a missing value is `null`;
 * - `hgetall` and `hmget` answer the raw flat arrays (`[field, value, …]`, `[value | null, …]`); a
 *   missing hash is `[]` (read them with `toRecord`, which makes that `null`);
 * - `set` answers `"OK"`, or `null` when NX/XX refused; `exists`, `hexists`, `del` … answer counts;
 * - `time()` answers `[seconds, microseconds]` as strings;
 * - a pipeline's or transaction's `exec` answers the array of replies, and rejects with the first
 *   command's error when any command failed (the others ran: a pipeline is not atomic);
 * - `evalsha` / `eval` answer the script's reply; an unknown SHA-1 rejects with Redis's own `NOSCRIPT …`
 *   text (src/stock/script.ts then sends the source).
 *
 * @example
 * const [bloom, version] = await redis.pipeline().get(a).get(b).exec<[string | null, string | null]>();
 */
export type RedisStore = {
  get<T = string>(key: string): Promise<T | null>;
  /** `"OK"`, or `null` when NX/XX refused (typed as Upstash's, which also allows SET … GET). */
  set<T extends string | number = string>(
    key: string,
    value: T,
    options?: SetOptions,
  ): Promise<"OK" | T | null>;
  del(...keys: string[]): Promise<number>;
  exists(...keys: string[]): Promise<number>;
  incr(key: string): Promise<number>;
  hget<T = string>(key: string, field: string): Promise<T | null>;
  hgetall(key: string): Promise<unknown>;
  hmget(key: string, ...fields: string[]): Promise<unknown>;
  hset(key: string, fields: Record<string, string | number>): Promise<number>;
  hdel(key: string, ...fields: string[]): Promise<0 | 1 | number>;
  hexists(key: string, field: string): Promise<number>;
  hkeys(key: string): Promise<string[]>;
  hlen(key: string): Promise<number>;
  /** HSCAN … COUNT: `[cursor, [field, value, …]]` (the cursor a string or a number; "0" once a pass ends). */
  hscan(
    key: string,
    cursor: string | number,
    options: { count: number },
  ): Promise<[string | number, (string | number)[]]>;
  sadd(key: string, member: string, ...members: string[]): Promise<number>;
  smembers(key: string): Promise<string[]>;
  sismember(key: string, member: string): Promise<number>;
  zrem(key: string, ...members: string[]): Promise<number>;
  /** Members (strings) by rank, or with `byScore` by score from `min` to `max`. */
  zrange<T extends unknown[] = string[]>(
    key: string,
    min: number,
    max: number,
    options?: ZRangeOptions,
  ): Promise<T>;
  time(): Promise<[number | string, number | string]>;
  pipeline(): RedisPipeline;
  multi(): RedisPipeline;
  /** EVALSHA: runs a script Redis has cached; rejects with `NOSCRIPT …` when it has not. */
  evalsha<TArgs extends unknown[], TData = unknown>(
    sha1: string,
    keys: string[],
    args: TArgs,
  ): Promise<TData>;
  /** EVAL: runs (and caches) a script's source. */
  eval<TArgs extends unknown[], TData = unknown>(script: string, keys: string[], args: TArgs): Promise<TData>;
};

/** SET's options the engine uses. */
export type SetOptions = { nx?: boolean; xx?: boolean; px?: number; ex?: number };

/** ZRANGE's options the engine uses (LIMIT needs `byScore`). */
export type ZRangeOptions = { rev?: boolean } & ({ byScore: true } | { byScore?: never }) &
  ({ offset: number; count: number } | { offset?: never; count?: never });

/** Commands queued for one round trip; `exec` answers their replies in order. */
export type RedisPipeline = {
  // biome-ignore lint/correctness/noUnusedVariables: mirrors Upstash's signature, whose call sites pass a type argument
  get<T = string>(key: string): RedisPipeline;
  set(key: string, value: string | number, options?: SetOptions): RedisPipeline;
  del(...keys: string[]): RedisPipeline;
  incr(key: string): RedisPipeline;
  // biome-ignore lint/correctness/noUnusedVariables: mirrors Upstash's signature, whose call sites pass a type argument
  hget<T = string>(key: string, field: string): RedisPipeline;
  hgetall(key: string): RedisPipeline;
  hmget(key: string, ...fields: string[]): RedisPipeline;
  hset(key: string, fields: Record<string, string | number>): RedisPipeline;
  hdel(key: string, ...fields: string[]): RedisPipeline;
  hexists(key: string, field: string): RedisPipeline;
  hkeys(key: string): RedisPipeline;
  hlen(key: string): RedisPipeline;
  hscan(key: string, cursor: string | number, options: { count: number }): RedisPipeline;
  sadd(key: string, member: string, ...members: string[]): RedisPipeline;
  smembers(key: string): RedisPipeline;
  sismember(key: string, member: string): RedisPipeline;
  zrem(key: string, ...members: string[]): RedisPipeline;
  hincrby(key: string, field: string, increment: number): RedisPipeline;
  expire(key: string, seconds: number): RedisPipeline;
  time(): RedisPipeline;
  exec<T extends unknown[] = unknown[]>(): Promise<T>;
};

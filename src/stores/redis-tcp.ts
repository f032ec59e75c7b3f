import Redis from "ioredis";
import type { RedisPipeline, RedisStore, SetOptions, ZRangeOptions } from "./redis-store";

/** A {@link RedisStore} that holds a TCP connection: close it when the process stops. */
export type RedisTcpStore = RedisStore & { close(): Promise<void> };

export type RedisTcpOptions = {
  /** A command not answered within this is rejected (the store is then answered 503). Default 2,000. */
  commandTimeoutMs?: number;
  /** Give up one connection attempt after this. Default 1,000. */
  connectTimeoutMs?: number;
  /** Connect on the first command instead of at once (tests). */
  lazy?: boolean;
};

type Arg = string | number;
type Command = [name: string, args: Arg[]];

function setArgs(key: string, value: Arg, o: SetOptions = {}): Arg[] {
  const args: Arg[] = [key, value];
  if (o.nx) args.push("NX");
  if (o.xx) args.push("XX");
  if (o.px !== undefined) args.push("PX", o.px);
  if (o.ex !== undefined) args.push("EX", o.ex);
  return args;
}

function zrangeArgs(key: string, min: number, max: number, o: ZRangeOptions = {}): Arg[] {
  const args: Arg[] = [key, min, max];
  if (o.byScore) args.push("BYSCORE");
  if (o.rev) args.push("REV");
  if (o.count !== undefined) args.push("LIMIT", o.offset ?? 0, o.count);
  return args;
}

const flat = (fields: Record<string, Arg>): Arg[] => Object.entries(fields).flat();

/** What the engine's commands send, by method name; shared by the client and its pipelines. */
const commands = {
  get: (key: string): Command => ["GET", [key]],
  set: (key: string, value: Arg, o?: SetOptions): Command => ["SET", setArgs(key, value, o)],
  del: (...keys: string[]): Command => ["DEL", keys],
  exists: (...keys: string[]): Command => ["EXISTS", keys],
  incr: (key: string): Command => ["INCR", [key]],
  hget: (key: string, field: string): Command => ["HGET", [key, field]],
  hgetall: (key: string): Command => ["HGETALL", [key]],
  hmget: (key: string, ...fields: string[]): Command => ["HMGET", [key, ...fields]],
  hset: (key: string, fields: Record<string, Arg>): Command => ["HSET", [key, ...flat(fields)]],
  hdel: (key: string, ...fields: string[]): Command => ["HDEL", [key, ...fields]],
  hexists: (key: string, field: string): Command => ["HEXISTS", [key, field]],
  hkeys: (key: string): Command => ["HKEYS", [key]],
  hlen: (key: string): Command => ["HLEN", [key]],
  hscan: (key: string, cursor: string | number, o: { count: number }): Command => [
    "HSCAN",
    [key, cursor, "COUNT", o.count],
  ],
  sadd: (key: string, ...members: string[]): Command => ["SADD", [key, ...members]],
  smembers: (key: string): Command => ["SMEMBERS", [key]],
  zrem: (key: string, ...members: string[]): Command => ["ZREM", [key, ...members]],
  zrange: (key: string, min: number, max: number, o?: ZRangeOptions): Command => [
    "ZRANGE",
    zrangeArgs(key, min, max, o),
  ],
  time: (): Command => ["TIME", []],
  hincrby: (key: string, field: string, increment: number): Command => ["HINCRBY", [key, field, increment]],
  expire: (key: string, seconds: number): Command => ["EXPIRE", [key, seconds]],
} satisfies Record<Exclude<keyof RedisStore, "pipeline" | "multi" | "evalsha" | "eval">, unknown> &
  Record<Exclude<keyof RedisPipeline, "exec">, unknown>;

/**
 * Command names go to ioredis upper-case, through `call`: ioredis reshapes some replies by lower-case
 * name (HGETALL into an object), and the engine relies on the raw replies Upstash gives.
 */
function send(client: Redis, [name, args]: Command): Promise<unknown> {
  return client.call(name, ...args);
}

function pipeline(client: Redis, atomic: boolean): RedisPipeline {
  const queued: Command[] = [];
  const builder = {} as RedisPipeline;
  for (const [method, build] of Object.entries(commands)) {
    (builder as Record<string, unknown>)[method] = (...args: never[]) => {
      queued.push((build as (...a: never[]) => Command)(...args));
      return builder;
    };
  }
  builder.exec = async <T extends unknown[]>() => {
    if (queued.length === 0) throw new Error("Pipeline is empty");
    const batch = atomic ? client.multi() : client.pipeline();
    for (const [name, args] of queued) batch.call(name, ...args);
    const replies = await batch.exec();
    if (!replies) throw new Error("Transaction aborted");
    return replies.map(([error, reply]) => {
      if (error) throw error;
      return reply;
    }) as T;
  };
  return builder;
}

/** EVALSHA or EVAL: the script's sha or source, the key count, the keys, the arguments. */
function evalCommand(
  client: Redis,
  name: "EVALSHA" | "EVAL",
  script: string,
  keys: string[],
  args: unknown[],
) {
  return client.call(name, script, keys.length, ...keys, ...args.map(String));
}

/**
 * A {@link RedisStore} over one TCP connection (ioredis, `redis://` or `rediss://`), for Node, Deno
 * and Bun servers. Commands issued in the same tick leave in one write (auto-pipelining), so one
 * connection serves the whole process. A store that is down fails calls fast instead of queueing them:
 * commands in flight when the connection drops are rejected at once (never resent: the caller decides,
 * see reserve-call.ts), commands sent while it reconnects are rejected when the next attempt fails
 * (attempts every ≤ 500 ms), and none waits longer than `commandTimeoutMs`. A connection that goes
 * silent (a half-open socket: the peer gone behind a proxy or NAT that keeps this side open, so no
 * reset ever comes) is dropped once commands have waited `commandTimeoutMs` without a byte coming back,
 * and replaced: its commands are rejected (outcome unknown), never matched to later replies.
 *
 * @example
 * const redis = connectRedisTcp(process.env.REDIS_URL);
 * await runScript(redis, reserveStockScript, keys, args);
 * await redis.close();
 */
export function connectRedisTcp(url: string, options: RedisTcpOptions = {}): RedisTcpStore {
  const client = new Redis(url, {
    enableAutoPipelining: true,
    enableOfflineQueue: true,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    commandTimeout: options.commandTimeoutMs ?? 2_000,
    socketTimeout: options.commandTimeoutMs ?? 2_000,
    keepAlive: 10_000,
    connectTimeout: options.connectTimeoutMs ?? 1_000,
    retryStrategy: (attempt) => Math.min(50 * 2 ** attempt, 500),
    lazyConnect: options.lazy ?? false,
  });
  let reported = false;
  client.on("ready", () => {
    reported = false;
  });
  client.on("error", (error: Error) => {
    if (!reported) console.warn("redis:", error.message);
    reported = true;
  });
  const store: Record<string, unknown> = {};
  for (const [method, build] of Object.entries(commands)) {
    store[method] = (...args: never[]) => send(client, (build as (...a: never[]) => Command)(...args));
  }
  return Object.assign(store as Omit<RedisStore, "pipeline" | "multi" | "evalsha" | "eval">, {
    pipeline: () => pipeline(client, false),
    multi: () => pipeline(client, true),
    evalsha: ((sha1: string, keys: string[], args: unknown[]) =>
      evalCommand(client, "EVALSHA", sha1, keys, args)) as RedisStore["evalsha"],
    eval: ((lua: string, keys: string[], args: unknown[]) =>
      evalCommand(client, "EVAL", lua, keys, args)) as RedisStore["eval"],
    close: async () => {
      await client.quit().catch(() => client.disconnect());
    },
  });
}

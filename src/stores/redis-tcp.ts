import { setImmediate } from "node:timers";
import calculateSlot from "cluster-key-slot";
import Redis, { Cluster } from "ioredis";
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
  /** Replicas that must hold a script's writes before its reply counts ({@link ackedScripts}); none by default. */
  replicaAcks?: ReplicaAcks;
};

/** `replicas` replicas must acknowledge a script's writes within `timeoutMs` (WAIT); 0 replicas: no WAIT. */
export type ReplicaAcks = { replicas: number; timeoutMs: number };

/** Sends of a script and its WAIT to a Cluster that answered MOVED, CLUSTERDOWN or TRYAGAIN, in all. */
const REDIRECTED_TRIES = 4;

/** A Cluster's answer that the command did not run there: its slot moved, or has no master right now. */
function movedOrDown(client: Redis | Cluster, error: Error | null | undefined): boolean {
  return client instanceof Cluster && !!error && /^(MOVED|CLUSTERDOWN|TRYAGAIN)\b/.test(error.message);
}

/** A script that ran on its master but whose writes too few replicas acknowledged: a failover may lose them. */
export class ReplicaAckError extends Error {
  override name = "ReplicaAckError";
}

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
  sismember: (key: string, member: string): Command => ["SISMEMBER", [key, member]],
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
function send(client: Redis | Cluster, [name, args]: Command): Promise<unknown> {
  return client.call(name, ...args);
}

/** One batch of commands as ioredis answers it: `[error, reply]` per command, null when a MULTI aborted. */
type Replies = Array<[Error | null, unknown]>;

/** Sends `queued` in one ioredis pipeline or MULTI and answers its replies. */
async function sendBatch(client: Redis | Cluster, queued: Command[], atomic: boolean): Promise<Replies> {
  const batch = atomic ? client.multi() : client.pipeline();
  for (const [name, args] of queued) batch.call(name, ...args);
  const replies = await batch.exec();
  if (!replies) throw new Error("Transaction aborted");
  return replies;
}

/** How queued commands are sent: one batch to one server, or one per slot to a Cluster. */
type SendQueued = (queued: Command[], atomic: boolean) => Promise<Replies>;

function pipeline(send: SendQueued, atomic: boolean): RedisPipeline {
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
    const replies = await send(queued, atomic);
    return replies.map(([error, reply]) => {
      if (error) throw error;
      return reply;
    }) as T;
  };
  return builder;
}

/** EVALSHA or EVAL: the script's sha or source, the key count, the keys, the arguments. */
function evalCommand(
  client: Redis | Cluster,
  name: "EVALSHA" | "EVAL",
  script: string,
  keys: string[],
  args: unknown[],
) {
  return client.call(name, script, keys.length, ...keys, ...args.map(String));
}

/** A script waiting for its batch: the command, and how its caller is answered. */
type AckedCall = { command: Command; resolve: (reply: unknown) => void; reject: (error: unknown) => void };

/** Scripts of one batch at most: the next batch gathers while one is out. */
const ACKED_BATCH = 256;

/**
 * Script calls whose replies count once `acks.replicas` replicas hold their writes. The calls of one
 * group (a Cluster's slot, or the one server) gather while the group's last batch is out, as ioredis's
 * auto-pipelining gathers commands, and leave as one pipeline: the scripts, then one `WAIT replicas
 * timeoutMs`. The pipeline goes on one connection to one node (a Cluster sends it to the master of the
 * slot; WAIT has no key), so WAIT counts the replicas holding every script of the batch: one wait per batch,
 * not per script. Fewer replicas than asked within the timeout: every script of the batch that ran is
 * rejected with {@link ReplicaAckError}. It did run on the master, but a failover before its replicas catch
 * up would lose it, so its outcome is unknown to the caller, as after a timeout: a buy runs the same attempt
 * again (a replay once the replicas have it) or voids it (src/stock/reserve.ts, src/buy/void-attempt.ts),
 * and a job is retried. A script's own error (NOSCRIPT included) is its answer, as without WAIT.
 */
function ackedScripts(client: Redis | Cluster, acks: ReplicaAcks) {
  const groups = new Map<number, { waiting: AckedCall[]; out: boolean }>();
  const flush = async (slot: number) => {
    const group = groups.get(slot);
    if (!group || group.out || group.waiting.length === 0) return;
    group.out = true;
    try {
      await sendAcked(client, acks, group.waiting.splice(0, ACKED_BATCH));
    } finally {
      group.out = false;
      if (group.waiting.length > 0) void flush(slot);
      else groups.delete(slot);
    }
  };
  return (name: "EVALSHA" | "EVAL", script: string, keys: string[], args: unknown[]) =>
    new Promise<unknown>((resolve, reject) => {
      const slot = client instanceof Cluster && keys[0] !== undefined ? calculateSlot(keys[0]) : -1;
      let group = groups.get(slot);
      if (!group) {
        group = { waiting: [], out: false };
        groups.set(slot, group);
      }
      group.waiting.push({
        command: [name, [script, keys.length, ...keys, ...args.map(String)]],
        resolve,
        reject,
      });
      if (!group.out && group.waiting.length === 1) setImmediate(() => void flush(slot));
    });
}

/**
 * One batch of {@link ackedScripts}: its scripts and one WAIT in one pipeline. ioredis follows a pipeline's
 * redirection only when no write in it succeeded, and WAIT does: after a failover the scripts are told
 * MOVED (they did not run), so the slots are learned again here and those scripts sent again.
 */
async function sendAcked(client: Redis | Cluster, acks: ReplicaAcks, calls: AckedCall[], attempt = 1) {
  let replies: Replies;
  try {
    replies = await sendBatch(
      client,
      [...calls.map((c) => c.command), ["WAIT", [acks.replicas, acks.timeoutMs]]],
      false,
    );
  } catch (error) {
    for (const call of calls) call.reject(error);
    return;
  }
  const [waitError, acked] = replies[calls.length] ?? [new Error("no reply to WAIT"), 0];
  const unacked =
    waitError ??
    (Number(acked) < acks.replicas
      ? new ReplicaAckError(
          `a script's writes reached ${Number(acked)} of ${acks.replicas} replica(s) within ${acks.timeoutMs} ms`,
        )
      : null);
  const redirected: AckedCall[] = [];
  for (const [i, call] of calls.entries()) {
    const [error, reply] = replies[i] ?? [new Error("no reply"), null];
    if (error && attempt < REDIRECTED_TRIES && movedOrDown(client, error)) redirected.push(call);
    else if (error) call.reject(error);
    else if (unacked) call.reject(unacked);
    else call.resolve(reply);
  }
  if (redirected.length === 0) return;
  await new Promise<void>((learned) => (client as Cluster).refreshSlotsCache(() => learned()));
  await new Promise((r) => setTimeout(r, 50 * attempt));
  await sendAcked(client, acks, redirected, attempt + 1);
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
  return storeOver(client, (queued, atomic) => sendBatch(client, queued, atomic), options.replicaAcks);
}

/**
 * The {@link RedisStore} over an ioredis client (one server or a Cluster), its batches sent by `sendQueued`.
 * A failing store is reported once per outage, not per command.
 */
export function storeOver(
  client: Redis | Cluster,
  sendQueued: SendQueued,
  acks: ReplicaAcks = { replicas: 0, timeoutMs: 0 },
): RedisTcpStore {
  let reported = false;
  client.on("ready", () => {
    reported = false;
  });
  client.on("error", (error: Error) => {
    if (!reported) console.warn("redis:", error.message);
    reported = true;
  });
  const acked = acks.replicas > 0 ? ackedScripts(client, acks) : null;
  const script = (name: "EVALSHA" | "EVAL", body: string, keys: string[], args: unknown[]) =>
    acked ? acked(name, body, keys, args) : evalCommand(client, name, body, keys, args);
  const store: Record<string, unknown> = {};
  for (const [method, build] of Object.entries(commands)) {
    store[method] = (...args: never[]) => send(client, (build as (...a: never[]) => Command)(...args));
  }
  return Object.assign(store as Omit<RedisStore, "pipeline" | "multi" | "evalsha" | "eval">, {
    pipeline: () => pipeline(sendQueued, false),
    multi: () => pipeline(sendQueued, true),
    evalsha: ((sha1: string, keys: string[], args: unknown[]) =>
      script("EVALSHA", sha1, keys, args)) as RedisStore["evalsha"],
    eval: ((lua: string, keys: string[], args: unknown[]) =>
      script("EVAL", lua, keys, args)) as RedisStore["eval"],
    close: async () => {
      await client.quit().catch(() => client.disconnect());
    },
  });
}

/**
 * Sends a Cluster's batch: a MULTI as it is (a transaction's keys are one sale's, one slot: see
 * src/stock/keys.ts), a pipeline as one pipeline per slot, in parallel, its replies put back in order
 * (ioredis refuses a pipeline whose keys span slots). `TIME`, which has no key, joins the first slot's.
 * Every batch settles before the answer, so a failure rejects with the error of the first failed command
 * in the caller's order, as on one server.
 */
async function sendBySlot(cluster: Cluster, queued: Command[], atomic: boolean): Promise<Replies> {
  if (atomic) return sendBatch(cluster, queued, true);
  const bySlot = new Map<number, number[]>();
  const keyless: number[] = [];
  for (const [at, [name, args]] of queued.entries()) {
    if (name === "TIME") {
      keyless.push(at);
      continue;
    }
    const slot = calculateSlot(String(args[0]));
    const group = bySlot.get(slot);
    if (group) group.push(at);
    else bySlot.set(slot, [at]);
  }
  const groups = [...bySlot.values()];
  if (groups[0]) groups[0].push(...keyless);
  else groups.push(keyless);
  const replies: Replies = new Array(queued.length);
  const sent = await Promise.allSettled(
    groups.map((indexes) =>
      sendBatch(
        cluster,
        indexes.map((at) => queued[at] as Command),
        false,
      ),
    ),
  );
  sent.forEach((batch, g) => {
    const indexes = groups[g] as number[];
    indexes.forEach((at, i) => {
      replies[at] =
        batch.status === "fulfilled" ? (batch.value[i] as [Error | null, unknown]) : [batch.reason, null];
    });
  });
  return replies;
}

/**
 * A {@link RedisStore} over a Redis Cluster (or Valkey in cluster mode), from its seed nodes (`redis://`
 * or `rediss://`, credentials from the first): ioredis's `Cluster` (v6, RESP2) follows MOVED and ASK,
 * learns the new masters after a failover, and sends each command to the master of its key's slot. Every
 * key of a sale shares one hash tag (src/stock/keys.ts), so each script and transaction runs on one node;
 * pipelines spanning sales are split by slot ({@link sendBySlot}). As on one server, a command in flight
 * when its node's connection closes is rejected, never resent (its outcome is unknown: the caller decides,
 * see reserve-call.ts), and no call waits longer than `commandTimeoutMs` for a cluster that is down
 * ({@link withDeadline}): callers answer 503. A command queued while no master served its slot may still
 * run once the cluster is back (as a timed-out command on one server may have run). Redirections (MOVED,
 * ASK, TRYAGAIN, CLUSTERDOWN) are followed: those commands did not run.
 * `TIME` is read on the master of one fixed slot (`{clock}`), so every process reads the same clock.
 *
 * @example
 * const redis = connectRedisCluster(["redis://10.0.0.1:6379", "redis://10.0.0.2:6379"]);
 */
export function connectRedisCluster(seeds: string[], options: RedisTcpOptions = {}): RedisTcpStore {
  const urls = seeds.map((seed) => new URL(seed));
  const first = urls[0];
  if (!first) throw new Error("a Redis Cluster needs at least one seed node");
  const timeoutMs = options.commandTimeoutMs ?? 2_000;
  if (urls.some((u) => u.protocol !== first.protocol))
    throw new Error("a Redis Cluster's seed nodes must all be redis:// or all rediss://");
  const tls = first.protocol === "rediss:";
  const cluster = new Cluster(
    urls.map((u) => ({ host: u.hostname.replace(/^\[|\]$/g, ""), port: Number(u.port || 6379) })),
    {
      enableAutoPipelining: true,
      enableOfflineQueue: true,
      retryDelayOnFailover: 0,
      // with TLS, connect by name so that certificates issued for it verify
      ...(tls ? { dnsLookup: (address, done) => done(null, address) } : {}),
      clusterRetryStrategy: (attempt) => Math.min(50 * 2 ** attempt, 500),
      slotsRefreshTimeout: options.connectTimeoutMs ?? 1_000,
      lazyConnect: options.lazy ?? false,
      redisOptions: {
        ...(first.username ? { username: decodeURIComponent(first.username) } : {}),
        ...(first.password ? { password: decodeURIComponent(first.password) } : {}),
        ...(tls ? { tls: {} } : {}),
        maxRetriesPerRequest: 0,
        autoResendUnfulfilledCommands: false,
        commandTimeout: timeoutMs,
        socketTimeout: timeoutMs,
        keepAlive: 10_000,
        connectTimeout: options.connectTimeoutMs ?? 1_000,
      },
    },
  );
  const store = storeOver(
    cluster,
    (queued, atomic) => sendBySlot(cluster, queued, atomic),
    options.replicaAcks,
  );
  store.time = () =>
    cluster.call("EVAL", "return redis.call('TIME')", 1, CLOCK_KEY) as Promise<[string, string]>;
  return withDeadline(store, timeoutMs);
}

/**
 * Every call of `store` rejected after `ms` without an answer. A Cluster queues commands while it has no
 * master for their slot (at start, or all masters down) and a node's `commandTimeout` only counts once a
 * command reaches it: without this a request would wait for the cluster to come back.
 */
function withDeadline(store: RedisTcpStore, ms: number): RedisTcpStore {
  const deadline = <T>(work: Promise<T>): Promise<T> => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the Redis Cluster did not answer within ${ms} ms`)), ms);
    });
    return Promise.race([work, late]).finally(() => clearTimeout(timer));
  };
  const batch = (open: () => RedisPipeline) => () => {
    const pipe = open();
    const exec = pipe.exec.bind(pipe);
    pipe.exec = (<T extends unknown[]>() => deadline(exec<T>())) as RedisPipeline["exec"];
    return pipe;
  };
  const { pipeline, multi, close, ...calls } = store;
  const bounded: Record<string, unknown> = {};
  for (const [name, call] of Object.entries(calls))
    bounded[name] = (...args: unknown[]) =>
      deadline((call as (...a: unknown[]) => Promise<unknown>)(...args));
  return Object.assign(bounded as RedisTcpStore, { pipeline: batch(pipeline), multi: batch(multi), close });
}

/** The key whose master's clock a Cluster store reads (`time()`). */
const CLOCK_KEY = "{clock}";

/**
 * Connections from the local Upstash stand-in to its redis-server, with replies left raw.
 *
 * Commands go out as `RawCommand`s: replies stay RESP2-shaped Buffers, never transformed by ioredis
 * (no HGETALL objects, no RESP3 pairs), so the REST layer can encode them exactly as Upstash does.
 * A few shared connections carry single commands and pipelines (ioredis pipelines on each socket);
 * transactions borrow a connection of their own so MULTI … EXEC never shares a socket, and blocking
 * commands get a `dedicated` one that is closed afterwards. Integer replies come back as decimal strings
 * (no rounding above 2^53). A command fails at once while Redis is down (nothing queues); one that
 * Redis is slow to answer waits for its reply, as it does behind Upstash: the client sets the limit.
 *
 * @example
 * const conns = createRedisConnections({ redisUrl, shared: 4, exclusive: 4, timeoutMs: 2_000 });
 * const reply = await run(conns.shared(), ["GET", "k"]);
 * const tx = await conns.borrow(); try { ... } finally { conns.giveBack(tx); }
 */
import { Command, Redis } from "ioredis";

/** A command whose reply is handed over exactly as the RESP2 decoder produced it. */
class RawCommand extends Command {
  constructor(name: string, args: string[]) {
    // Upper case keeps ioredis from applying its per-command reply transformers (keyed by lower case).
    super(name.toUpperCase(), args, { replyEncoding: null });
  }
  override transformReply(result: Buffer | Buffer[]): Buffer | Buffer[] {
    return result;
  }
}

/** Sends `[name, ...args]` on `conn` and resolves with the raw reply. */
export function run(conn: Redis, [name, ...args]: string[]): Promise<unknown> {
  const command = new RawCommand(name ?? "", args);
  conn.sendCommand(command);
  return command.promise;
}

export type RedisConnections = {
  /** A shared connection, round robin. */
  shared(): Redis;
  /** A new connection for one blocking command; the caller disconnects it. */
  dedicated(): Promise<Redis>;
  /** A connection nobody else uses until `giveBack`; rejects after `timeoutMs` if none frees up. */
  borrow(): Promise<Redis>;
  /** Returns a borrowed connection; a broken one (`healthy` false) is dropped and replaced later. */
  giveBack(conn: Redis, healthy?: boolean): void;
  /** Resolves once the shared connections are ready, or after `waitMs` anyway. */
  ready(waitMs: number): Promise<void>;
  close(): Promise<void>;
};

export type RedisConnectionOptions = {
  redisUrl: string;
  shared: number;
  exclusive: number;
  /** Connect timeout, and how long `borrow` waits for a free connection. */
  timeoutMs: number;
};

export function createRedisConnections(options: RedisConnectionOptions): RedisConnections {
  const connect = () => connection(options);
  const shared = Array.from({ length: options.shared }, connect);
  const pool: ExclusivePool = { options, connect, idle: [], waiters: [], lent: 0, closed: false };
  let next = 0;
  return {
    shared() {
      const conn = shared[next++ % shared.length];
      if (!conn) throw new Error("no Redis connection");
      return conn;
    },
    dedicated() {
      if (pool.closed) return Promise.reject(new Error("connections closed"));
      return usable(connect(), options.timeoutMs);
    },
    borrow: () => borrow(pool),
    giveBack: (conn, healthy = true) => giveBack(pool, conn, healthy),
    async ready(waitMs) {
      await Promise.all(shared.map((conn) => whenReady(conn, waitMs)));
    },
    async close() {
      pool.closed = true;
      for (const conn of [...shared, ...pool.idle]) conn.disconnect();
      pool.idle.length = 0;
    },
  };
}

/** A connection with replies untouched, failing at once while Redis is down, reconnecting in the background. */
function connection(options: RedisConnectionOptions): Redis {
  const conn = new Redis(options.redisUrl, {
    protocol: 2,
    stringNumbers: true,
    connectTimeout: options.timeoutMs,
    enableOfflineQueue: false,
    autoResendUnfulfilledCommands: false,
    maxRetriesPerRequest: 0,
    disableClientInfo: true,
    retryStrategy: (times) => Math.min(times * 50, 500),
  });
  conn.on("error", () => undefined);
  return conn;
}

async function usable(conn: Redis, timeoutMs: number): Promise<Redis> {
  await whenReady(conn, timeoutMs);
  return conn;
}

/** The connections lent to one user at a time (transactions): at most `exclusive`, then callers wait. */
type ExclusivePool = {
  options: RedisConnectionOptions;
  connect: () => Redis;
  idle: Redis[];
  waiters: Array<(conn: Redis) => void>;
  lent: number;
  closed: boolean;
};

function borrow(pool: ExclusivePool): Promise<Redis> {
  const { options, idle, waiters } = pool;
  if (pool.closed) return Promise.reject(new Error("connections closed"));
  const conn = idle.pop();
  if (conn) return usable(conn, options.timeoutMs);
  if (pool.lent < options.exclusive) {
    pool.lent++;
    return usable(pool.connect(), options.timeoutMs);
  }
  return new Promise<Redis>((resolve, reject) => {
    const timer = setTimeout(() => {
      waiters.splice(waiters.indexOf(take), 1);
      reject(new Error("no Redis connection free for a transaction"));
    }, options.timeoutMs);
    const take = (c: Redis) => {
      clearTimeout(timer);
      resolve(c);
    };
    waiters.push(take);
  });
}

function giveBack(pool: ExclusivePool, conn: Redis, healthy: boolean): void {
  if (!healthy || pool.closed) {
    conn.disconnect();
    pool.lent--;
    const waiter = pool.waiters.shift();
    if (waiter && !pool.closed) {
      pool.lent++;
      waiter(pool.connect());
    }
    return;
  }
  const waiter = pool.waiters.shift();
  if (waiter) waiter(conn);
  else pool.idle.push(conn);
}

/** Resolves when `conn` is ready or `waitMs` has passed, whichever comes first. */
function whenReady(conn: Redis, waitMs: number): Promise<void> {
  if (conn.status === "ready") return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      conn.off("ready", done);
      resolve();
    };
    const timer = setTimeout(done, waitMs);
    conn.once("ready", done);
  });
}

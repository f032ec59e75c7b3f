/**
 * What the shop's webhooks cost per order: the engine on a server runtime takes in-stock buys from wrk
 * (a distinct shopper token and address per request) with 0, 1 and 3 webhook endpoints subscribed to
 * every order event, each round on a fresh sale. QStash deliveries are held while wrk runs, so the
 * buy requests are measured alone (Redis commands per attempt: the admitted attempt must stay one
 * EVALSHA whatever the endpoints), then released: the order pipeline writes the orders and their
 * outbox rows and publishes the deliveries, which a local receiver takes (answers 204, counts them).
 * Per order: CPU of the engine, redis-server, Postgres and this process (the QStash stand-in), QStash
 * messages published and webhook deliveries received.
 *
 * @example
 * const rows = await webhookFanoutPhase(env, { runtime: "bun", endpoints: [0, 1, 3], seconds: 6, … });
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import pg from "pg";
import type { ServerRuntimeName } from "../../local/server-runtime";
import { operator } from "../clients/admin";
import { runWrk, writeTokens } from "../clients/wrk";
import { stackCpu } from "../measure/proc";
import { RedisStats } from "../measure/redis-stats";
import { startEngine } from "../setup/engine-server";
import type { BenchEnvironment } from "../setup/environment";

export type FanoutOptions = {
  runtime: ServerRuntimeName;
  endpoints: number[];
  seconds: number;
  connections: number;
  tokens: number;
  out: string;
  log: (line: string) => void;
  /** print each round's Postgres statements by execution time (pg_stat_statements), per order */
  statements?: boolean;
  /**
   * QStash delivers while wrk runs, as in a real rush (the order writes and their webhooks alongside
   * the buys), instead of holding the deliveries and releasing them at once after it (the Redis commands
   * per buy then count the pipeline's too)
   */
  steady?: boolean;
};

/** One round's figures, per admitted order (CPU in µs). */
export type FanoutRow = {
  endpoints: number;
  orders: number;
  reqPerSec: number;
  /** wrk's latency of the buys, ms (with `steady`, while the order writes and their webhooks run alongside) */
  latencyMs: { p50: number; p99: number };
  /** Redis commands per buy request while deliveries were held (EVALSHA and what the script runs) */
  buyCommands: { evalsha: number; all: number };
  cpu: { engine: number; redis: number; postgres: number; qstash: number; total: number };
  messagesPerOrder: number;
  deliveriesPerOrder: number;
};

const ORDER_EVENTS = [
  "order.reserved",
  "order.awaiting_payment",
  "order.paid",
  "order.expired",
  "order.cancelled",
];

/** A shop's endpoint that takes every delivery (204) and counts them. */
async function startCountingReceiver(): Promise<{ url: string; count(): number; close(): Promise<void> }> {
  let received = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      received++;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    count: () => received,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
}

/** The rounds, one per endpoint count, on one engine. */
export async function webhookFanoutPhase(env: BenchEnvironment, o: FanoutOptions): Promise<FanoutRow[]> {
  const engine = await startEngine(env, o.runtime, (l) => o.log(`  engine: ${l}`));
  const redis = new RedisStats(env.redisUrl);
  const db = new pg.Client({ connectionString: env.databaseUrl });
  await db.connect();
  const receiver = await startCountingReceiver();
  const op = operator(engine.url, env.adminToken);
  const qstash = (path: string, method = "POST") =>
    fetch(`${env.qstashUrl}/__local/${path}`, {
      method,
      headers: { authorization: `Bearer ${env.qstashToken}` },
    }).then((r) => r.json() as Promise<{ counters?: { published?: number } }>);
  const rows: FanoutRow[] = [];
  try {
    for (const count of o.endpoints) {
      const ids: string[] = [];
      for (let i = 0; i < count; i++) ids.push(await op.addWebhook(receiver.url, ORDER_EVENTS));
      rows.push(await round(count));
      for (const id of ids) await op.removeWebhook(id);
    }
  } finally {
    await receiver.close();
    await redis.close();
    await db.end();
    await engine.stop();
  }
  return rows;

  async function round(endpoints: number): Promise<FanoutRow> {
    const sale = await op.createSale(`fanout-${endpoints}-${Date.now().toString(36)}`, 5_000_000, 1);
    const tokens = await writeTokens(
      join(o.out, "wrk"),
      env.jwtSecret,
      `wh${endpoints}-${Date.now().toString(36)}`,
      o.tokens,
    );
    const cpu = () => stackCpu(engine.child.pid ?? 0, env.pids);
    const published = async () => (await qstash("state", "GET")).counters?.published ?? 0;
    const written = async () =>
      Number(
        (await db.query<{ n: string }>("select count(*) as n from orders where sale_id = $1", [sale.saleId]))
          .rows[0]?.n ?? 0,
      );
    const delivered0 = receiver.count();
    const m0 = await published();
    if (o.statements) {
      await db.query("create extension if not exists pg_stat_statements");
      await db.query("select pg_stat_statements_reset()");
    }
    if (!o.steady) await qstash("pause");
    const r0 = await redis.snapshot();
    const a = cpu();
    const wrk = await runWrk(
      {
        url: engine.url,
        method: "POST",
        path: `/api/buy/${sale.productToken}`,
        tokens,
        seconds: o.seconds,
        connections: o.connections,
        body: '{"quantity":1}',
      },
      join(o.out, "wrk"),
    );
    await new Promise((r) => setTimeout(r, 300)); // the last publish batches
    const r1 = await redis.snapshot();
    if (!o.steady) await qstash("resume");
    const admitted = wrk.requests - wrk.non2xx;
    await waitFor(async () => (await written()) >= admitted, 120_000);
    // every order event the endpoints subscribe to so far: reserved and awaiting payment, per endpoint
    await waitFor(async () => receiver.count() - delivered0 >= admitted * 2 * endpoints, 120_000);
    const b = cpu();
    const orders = await written();
    const per = (d: number) => Math.round((d / Math.max(1, orders)) * 10) / 10;
    if (o.statements) await printStatements(db, orders, endpoints, o.log);
    const d = RedisStats.delta(r0, r1);
    const commands = d.scripts.calls + d.otherCalls;
    const evalsha = d.scripts.calls;
    const cpuRow = {
      engine: per(b.server - a.server),
      redis: per(b.redis - a.redis),
      postgres: per(b.postgres - a.postgres),
      qstash: per(b.self - a.self),
      total: per(b.server - a.server + b.redis - a.redis + b.postgres - a.postgres + b.self - a.self),
    };
    return {
      endpoints,
      orders,
      reqPerSec: wrk.reqPerSec,
      latencyMs: { p50: Math.round(wrk.p50Us / 100) / 10, p99: Math.round(wrk.p99Us / 100) / 10 },
      buyCommands: {
        evalsha: Math.round((evalsha / Math.max(1, wrk.requests)) * 1000) / 1000,
        all: Math.round((commands / Math.max(1, wrk.requests)) * 100) / 100,
      },
      cpu: cpuRow,
      messagesPerOrder: Math.round((((await published()) - m0) / Math.max(1, orders)) * 1000) / 1000,
      deliveriesPerOrder: Math.round(((receiver.count() - delivered0) / Math.max(1, orders)) * 100) / 100,
    };
  }
}

/** Postgres's statements of a round by execution time, per order (µs), the heaviest first. */
async function printStatements(
  db: pg.Client,
  orders: number,
  endpoints: number,
  log: (line: string) => void,
): Promise<void> {
  const top = await db.query<{ query: string; calls: string; ms: string; rows: string }>(
    `select query, calls, total_exec_time as ms, rows from pg_stat_statements
     where query not ilike '%pg_stat_statements%' order by total_exec_time desc limit 8`,
  );
  log(`  Postgres statements with ${endpoints} endpoint(s), µs per order · calls · rows:`);
  for (const row of top.rows)
    log(
      `    ${((Number(row.ms) * 1000) / Math.max(1, orders)).toFixed(1).padStart(7)}  ${row.calls.padStart(6)}  ${row.rows.padStart(7)}  ${row.query.replace(/\s+/g, " ").slice(0, 140)}`,
    );
}

/** The phase's table. */
export function printFanout(rows: FanoutRow[], log: (line: string) => void): void {
  log(
    "  endpoints  orders  buys/s  p50 / p99 ms  EVALSHA per buy (all cmds)  CPU µs per order: engine · redis · pg · qstash+bench = total  QStash msgs/order  deliveries/order",
  );
  for (const r of rows)
    log(
      `  ${String(r.endpoints).padStart(9)}  ${String(r.orders).padStart(6)}  ${String(r.reqPerSec).padStart(6)}  ${`${r.latencyMs.p50} / ${r.latencyMs.p99}`.padStart(12)}  ${`${r.buyCommands.evalsha} (${r.buyCommands.all})`.padStart(26)}  ${`${r.cpu.engine} · ${r.cpu.redis} · ${r.cpu.postgres} · ${r.cpu.qstash} = ${r.cpu.total}`.padStart(58)}  ${String(r.messagesPerOrder).padStart(17)}  ${String(r.deliveriesPerOrder).padStart(16)}`,
    );
}

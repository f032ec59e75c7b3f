/**
 * What REDIS_REPLICA_ACKS=1 costs a buy, in the same run: reservations (reserve-stock.lua, each an
 * admitted reservation by a new shopper) through the engine's TCP store (`connectRedisTcp`) against a
 * redis-server with one replica, without acknowledgements and with them (the script and `WAIT 1` in one
 * pipeline), in interleaved rounds. The figure is reservations a second with `--inflight` calls in flight
 * at once (what one process's connection carries: WAIT holds the calls behind it), and each call's p50
 * and p99; only the ratio between the two kinds counts on a shared machine.
 *
 * @example
 * npx tsx --import ./local/lua-as-text.mjs bench/replica-acks-cost.ts --rounds 6 --calls 4000 --inflight 64
 */
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import { waitFor } from "../local/ports";
import { startRedis } from "../local/redis-process";
import { reserveStockScript } from "../src/stock/reserve";
import { reserveScriptCall } from "../src/stock/reserve-call";
import { runScript } from "../src/stock/script";
import { connectRedisTcp } from "../src/stores/redis-tcp";
import { seedScriptSale } from "./setup/script-sale";

const { values: args } = parseArgs({
  options: {
    rounds: { type: "string", default: "6" },
    calls: { type: "string", default: "4000" },
    inflight: { type: "string", default: "64" },
  },
});
const ROUNDS = Number(args.rounds);
const CALLS = Number(args.calls);
const INFLIGHT = Number(args.inflight);
const limits = { userPerWindow: 1_000_000, ipPerWindow: 1_000_000, windowMs: 1000 };

const master = await startRedis();
const replica = await startRedis({ args: ["--replicaof", "127.0.0.1", String(master.port)] });
const admin = new Redis(master.url);
await waitFor(async () => /slave0:.*state=online/.test(await admin.info("replication")), {
  timeoutMs: 30_000,
  intervalMs: 200,
  what: "the replica in sync",
});

const kinds = [
  { name: "no acknowledgement (default)", replicas: 0 },
  { name: "REDIS_REPLICA_ACKS=1", replicas: 1 },
];
const stores = kinds.map((k) =>
  connectRedisTcp(master.url, { replicaAcks: { replicas: k.replicas, timeoutMs: 250 } }),
);

async function round(kind: number, r: number): Promise<{ perSecond: number; p50: number; p99: number }> {
  const saleId = `acks-${kind}-${r}`;
  const now = Date.now();
  await seedScriptSale(admin, saleId, now, 10_000_000);
  const store = stores[kind] as (typeof stores)[number];
  const took: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: INFLIGHT }, async () => {
      while (next < CALLS) {
        const i = next++;
        const { keys, args: argv } = reserveScriptCall(
          {
            saleId,
            orderId: `${saleId}-${i}`,
            userId: `u${i}`,
            ip: `10.0.${i % 250}.${i % 200}`,
            quantity: 1,
            idempotencyKey: null,
            now,
          },
          limits,
        );
        const t = performance.now();
        await runScript(store, reserveStockScript, keys, argv);
        took.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  took.sort((a, b) => a - b);
  const at = (q: number) => took[Math.min(took.length - 1, Math.floor(q * took.length))] ?? 0;
  return { perSecond: CALLS / seconds, p50: at(0.5), p99: at(0.99) };
}

const results = kinds.map(() => [] as { perSecond: number; p50: number; p99: number }[]);
for (let r = 0; r < ROUNDS; r++)
  for (const k of r % 2 === 0 ? [0, 1] : [1, 0]) results[k]?.push(await round(k, r));

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
console.log(`${ROUNDS} rounds of ${CALLS} reservations, ${INFLIGHT} in flight, one master and one replica`);
const base = median((results[0] ?? []).map((x) => x.perSecond));
for (const [k, kind] of kinds.entries()) {
  const rs = results[k] ?? [];
  const perSecond = median(rs.map((x) => x.perSecond));
  console.log(
    `${kind.name.padEnd(30)} ${Math.round(perSecond).toLocaleString("en").padStart(8)} /s  ` +
      `(${(perSecond / base).toFixed(2)}×)  p50 ${median(rs.map((x) => x.p50)).toFixed(2)} ms  ` +
      `p99 ${median(rs.map((x) => x.p99)).toFixed(2)} ms`,
  );
}
console.log(`replica offset ${/slave0:.*offset=(\d+)/.exec(await admin.info("replication"))?.[1]}`);

for (const store of stores) await store.close();
admin.disconnect();
await replica.stop();
await master.stop();

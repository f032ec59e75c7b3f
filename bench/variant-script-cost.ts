/**
 * What a reservation costs Redis, before and after variants, in the same run: reserve-stock.lua as it
 * was before carts (from git, `--before` commit) called as the engine called it then, against today's
 * script called as the engine calls it now (a sale of one bought with `{quantity}`, no lines; the same
 * sale bought with one line; a drop of 12: carts of 1 and 3 lines). `--before` defaults to the commit
 * before the first variants commit (3dceaf4). Each kind runs in interleaved rounds on a fresh redis-server, every call an admitted
 * reservation by a new shopper; Redis's own `cmdstat_evalsha` microseconds per call (INFO commandstats,
 * reset before each round) are the figure, so the load generator is not what is measured.
 *
 * @example
 * npx tsx bench/variant-script-cost.ts --rounds 6 --calls 4000
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import { startRedis } from "../local/redis-process";
import { saleKeys } from "../src/stock/keys";
import { type ReserveLine, reserveScriptCall } from "../src/stock/reserve-call";
import { seedScriptSale } from "./setup/script-sale";

const { values: args } = parseArgs({
  options: {
    rounds: { type: "string", default: "6" },
    calls: { type: "string", default: "4000" },
    before: { type: "string", default: "3dceaf4^" },
  },
});
const ROUNDS = Number(args.rounds);
const CALLS = Number(args.calls);
const root = join(import.meta.dirname, "..");
const now = Date.now();
const limits = { userPerWindow: 1_000_000, ipPerWindow: 1_000_000, windowMs: 1000 };

const beforeSource = execFileSync("git", ["show", `${args.before}:lua/reserve-stock.lua`], {
  cwd: root,
  encoding: "utf8",
});
const afterSource = readFileSync(join(root, "lua/reserve-stock.lua"), "utf8");

const redis = await startRedis();
const client = new Redis(redis.url);
const [beforeSha, afterSha] = (await Promise.all([
  client.script("LOAD", beforeSource),
  client.script("LOAD", afterSource),
])) as [string, string];

const SIZES = Array.from({ length: 12 }, (_, i) => `eu-${36 + i}`);

async function sale(saleId: string, variants: boolean): Promise<void> {
  const k = saleKeys(saleId);
  await seedScriptSale(client, saleId, now, 10_000_000);
  if (variants) for (const s of SIZES) await client.hset(k.variantStock, s, 1_000_000);
}

type Kind = {
  name: string;
  sha: string;
  call: (i: number, saleId: string) => { keys: string[]; args: string[] };
  variants: boolean;
};

const line = (variantId: string, quantity = 1): ReserveLine => ({
  variantId,
  quantity,
  priceCents: 12_900,
  cap: 0,
});
const request = (saleId: string, i: number, extra: object = {}) => ({
  saleId,
  orderId: `${saleId}-${i}`,
  userId: `u${i}`,
  ip: `10.0.${i % 250}.${i % 200}`,
  quantity: 1,
  idempotencyKey: null,
  now,
  ...extra,
});

const kinds: Kind[] = [
  {
    name: "before: one product",
    sha: beforeSha,
    variants: false,
    call: (i, s) => reserveScriptCall(request(s, i), limits),
  },
  {
    name: "after: a sale of one, `{quantity}`",
    sha: afterSha,
    variants: false,
    call: (i, s) => reserveScriptCall(request(s, i), limits),
  },
  {
    name: "after: one variant, one line",
    sha: afterSha,
    variants: false,
    call: (i, s) => reserveScriptCall(request(s, i, { lines: [line("default")] }), limits),
  },
  {
    name: "after: drop of 12, one line",
    sha: afterSha,
    variants: true,
    call: (i, s) =>
      reserveScriptCall(request(s, i, { lines: [line(SIZES[i % 12] as string)], perVariant: true }), limits),
  },
  {
    name: "after: drop of 12, cart of 3",
    sha: afterSha,
    variants: true,
    call: (i, s) =>
      reserveScriptCall(
        request(s, i, {
          quantity: 3,
          lines: [0, 4, 8].map((o) => line(SIZES[(i + o) % 12] as string)),
          perVariant: true,
        }),
        limits,
      ),
  },
];

async function usecPerCall(): Promise<number> {
  const info = await client.info("commandstats");
  const m = /cmdstat_evalsha:calls=(\d+),usec=(\d+)/.exec(info);
  return m ? Number(m[2]) / Number(m[1]) : Number.NaN;
}

const results = new Map<string, number[]>(kinds.map((k) => [k.name, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const kind of kinds) {
    const saleId = `bench${round}${kinds.indexOf(kind)}`;
    await sale(saleId, kind.variants);
    await client.config("RESETSTAT");
    for (let i = 0; i < CALLS; i += 100) {
      const pipe = client.pipeline();
      for (let j = i; j < Math.min(i + 100, CALLS); j++) {
        const { keys, args: argv } = kind.call(j, saleId);
        pipe.evalsha(kind.sha, keys.length, ...keys, ...argv);
      }
      const replies = (await pipe.exec()) ?? [];
      for (const [error, reply] of replies)
        if (error || (reply as unknown[])[0] !== 1)
          throw new Error(`${kind.name}: ${error ?? JSON.stringify(reply)}`);
    }
    results.get(kind.name)?.push(await usecPerCall());
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const base = median(results.get(kinds[0]?.name as string) ?? []);
console.log(`reserve-stock.lua, Redis CPU per admitted reservation (median of ${ROUNDS} rounds of ${CALLS})`);
for (const [name, xs] of results)
  console.log(
    `${name.padEnd(38)} ${median(xs).toFixed(2).padStart(6)} µs  ${(median(xs) / base).toFixed(2)}×`,
  );
client.disconnect();
await redis.stop();

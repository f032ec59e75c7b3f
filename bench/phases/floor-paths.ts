/**
 * The per-path rows measured with wrk (bench/clients/wrk.ts), so the client is never the bottleneck: on
 * one engine (workerd, Deno or Bun), the no-op route `GET /api/health`, a Bloom miss (404), a sold-out
 * sale a warm process knows (410) and an admitted buy (202, the order pipeline running), each with a
 * distinct shopper token and client address per request; then the naive server's buy on the same
 * runtime. Each path's req/s and CPU per request (the engine's process, /proc/<pid>/stat; for the
 * admitted buy also redis-server, Postgres's process tree and this process, which hosts the QStash
 * stand-in) is reported as a ratio to the no-op route of the same run.
 *
 * @example
 * const rows = await floorPaths(ctx, { runtime: "bun", url, pid });
 */
import { mkdir } from "node:fs/promises";
import { operator } from "../clients/admin";
import { shopperToken } from "../clients/jwt";
import { runWrk, type WrkResult, writeTokens } from "../clients/wrk";
import { stackCpu } from "../measure/proc";
import type { BenchEnvironment } from "../setup/environment";

/** What the rows need: the stack, how long each path runs and with how many connections. */
export type FloorContext = {
  env: BenchEnvironment;
  seconds: number;
  connections: number;
  /** distinct tokens (and addresses) per path; the script cycles through them */
  tokens: number;
  /** only these paths (keys of {@link PATH_KEYS}); all when absent */
  paths?: ReadonlySet<string>;
  dir: string;
  log: (line: string) => void;
};

/** One path's figures and its ratios to the no-op route. */
export type FloorRow = {
  path: string;
  expect: number;
  wrk: WrkResult;
  /** CPU µs per request: the server's process, and for the admitted buy the stores' */
  cpuPerRequest: { server: number; redis?: number; postgres?: number; qstash?: number; total: number };
  /** QStash messages published per request (the admitted buy: the order pipeline's batches) */
  messagesPerRequest?: number;
  vsNoop: { reqPerSec: number; cpu: number } | null;
};

/** Where a server under test runs and how to read its CPU. */
export type FloorTarget = { name: string; url: string; pid: number; admin: boolean };

const readCpu = (ctx: FloorContext, pid: number) => stackCpu(pid, ctx.env.pids);

/** Messages the QStash stand-in took so far (its local state route). */
async function published(ctx: FloorContext): Promise<number> {
  const res = await fetch(`${ctx.env.qstashUrl}/__local/state`, {
    headers: { authorization: `Bearer ${ctx.env.qstashToken}` },
  }).catch(() => null);
  const state = (await res?.json().catch(() => null)) as { counters?: { published?: number } } | null;
  return state?.counters?.published ?? 0;
}

type PathPlan = {
  key: PathKey;
  path: string;
  label: string;
  expect: number;
  method: "GET" | "POST";
  stores?: boolean;
};

/** The paths' short names, for `--paths` (a profile of one path, say). */
export const PATH_KEYS = ["noop", "miss", "soldout", "instock", "naive", "naive-soldout"] as const;
export type PathKey = (typeof PATH_KEYS)[number];

async function measurePath(ctx: FloorContext, target: FloorTarget, plan: PathPlan): Promise<FloorRow> {
  const tag = `${target.name}-${plan.expect}-${Date.now().toString(36)}`;
  const tokens = await writeTokens(ctx.dir, ctx.env.jwtSecret, tag, ctx.tokens);
  const first = await fetch(`${target.url}${plan.path}`, {
    method: plan.method,
    headers: { authorization: `Bearer ${tag}-probe`, "cf-connecting-ip": "10.254.0.1" },
  }).catch(() => null);
  await first?.arrayBuffer();
  const m0 = plan.stores ? await published(ctx) : 0;
  const a = readCpu(ctx, target.pid);
  const wrk = await runWrk(
    {
      url: target.url,
      method: plan.method,
      path: plan.path,
      tokens,
      seconds: ctx.seconds,
      connections: ctx.connections,
      ...(plan.method === "POST" ? { body: '{"quantity":1}' } : {}),
    },
    ctx.dir,
  );
  const b = readCpu(ctx, target.pid);
  const m1 = plan.stores ? await published(ctx) : 0;
  const per = (d: number) => Math.round((d / Math.max(1, wrk.requests)) * 10) / 10;
  const server = per(b.server - a.server);
  const stores = plan.stores
    ? {
        redis: per(b.redis - a.redis),
        postgres: per(b.postgres - a.postgres),
        qstash: per(b.self - a.self),
      }
    : {};
  const total = server + (stores.redis ?? 0) + (stores.postgres ?? 0) + (stores.qstash ?? 0);
  return {
    path: plan.label,
    expect: plan.expect,
    wrk,
    cpuPerRequest: { server, ...stores, total: Math.round(total * 10) / 10 },
    ...(plan.stores
      ? { messagesPerRequest: Math.round(((m1 - m0) / Math.max(1, wrk.requests)) * 1000) / 1000 }
      : {}),
    vsNoop: null,
  };
}

/**
 * The engine's rows: it creates a sold-out sale (one unit, bought) and an open one (`openStock` units),
 * then measures each path in turn.
 */
export async function floorPaths(ctx: FloorContext, target: FloorTarget): Promise<FloorRow[]> {
  await mkdir(ctx.dir, { recursive: true });
  const op = operator(target.url, ctx.env.adminToken);
  const run = `${target.name}-${Date.now().toString(36)}`;
  const gone = await op.createSale(`floor-gone-${run}`, 1, 1);
  const open = await op.createSale(`floor-open-${run}`, 5_000_000, 1);
  // the one unit goes, then a refusal teaches the process the sale is sold out
  for (const user of ["first", "second"]) {
    const res = await fetch(`${target.url}/api/buy/${gone.productToken}`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${shopperToken(ctx.env.jwtSecret, `${run}-${user}`)}`,
        "cf-connecting-ip": "10.253.0.1",
      },
    });
    await res.arrayBuffer();
  }
  const plans: PathPlan[] = [
    { key: "noop", path: "/api/health", label: "no-op GET /api/health", expect: 200, method: "GET" },
    {
      key: "miss",
      path: `/api/buy/${"Q".repeat(43)}`,
      label: "Bloom miss (404)",
      expect: 404,
      method: "POST",
    },
    {
      key: "soldout",
      path: `/api/buy/${gone.productToken}`,
      label: "sold out (410)",
      expect: 410,
      method: "POST",
    },
    {
      key: "instock",
      path: `/api/buy/${open.productToken}`,
      label: "in stock (202)",
      expect: 202,
      method: "POST",
      stores: true,
    },
  ];
  const rows: FloorRow[] = [];
  for (const plan of plans.filter((p) => !ctx.paths || ctx.paths.has(p.key))) {
    ctx.log(`  [${target.name}] wrk ${plan.label}, ${ctx.seconds} s, ${ctx.connections} connections`);
    rows.push(await measurePath(ctx, target, plan));
  }
  return withRatios(rows);
}

/**
 * The naive server's buy (its hot row) on the same runtime: in stock, or sold out (its row at 0: every
 * attempt is still a Postgres transaction, which is what the engine's 410 from memory is compared with).
 */
export async function naiveFloorPaths(
  ctx: FloorContext,
  target: FloorTarget,
  which: "naive" | "naive-soldout",
): Promise<FloorRow[]> {
  const rows: FloorRow[] = [];
  const plans: PathPlan[] = [
    which === "naive"
      ? {
          key: "naive",
          path: "/buy/seed-000",
          label: "naive buy (hot row)",
          expect: 202,
          method: "POST",
          stores: true,
        }
      : {
          key: "naive-soldout",
          path: "/buy/seed-000",
          label: "naive sold out (410)",
          expect: 410,
          method: "POST",
          stores: true,
        },
  ];
  for (const plan of plans) {
    ctx.log(`  [${target.name}] wrk ${plan.label}, ${ctx.seconds} s, ${ctx.connections} connections`);
    rows.push(await measurePath(ctx, target, plan));
  }
  return rows;
}

/** Each row's req/s and CPU per request as a ratio to the first row's (the no-op route). */
export function withRatios(rows: FloorRow[], noop = rows[0]): FloorRow[] {
  if (!noop) return rows;
  const r = (v: number, base: number) => Math.round((v / Math.max(1e-9, base)) * 100) / 100;
  return rows.map((row) => ({
    ...row,
    vsNoop: {
      reqPerSec: r(row.wrk.reqPerSec, noop.wrk.reqPerSec),
      cpu: r(row.cpuPerRequest.server, noop.cpuPerRequest.server),
    },
  }));
}

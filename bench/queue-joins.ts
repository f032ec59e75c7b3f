/**
 * Joins per second into one queue sale's waiting room, on a server runtime: distinct shoppers (one token
 * each, own client addresses), a closed loop of `--connections` for `--seconds`, then a pass of ticket
 * reads (`GET …/queue/me`). Counted at the stores: Redis commands per request (INFO commandstats) and the
 * engine process's CPU per request and Postgres's (its processes', /proc: a join's ticket is written there
 * before it is answered, src/room/room-record.ts). `--pow` makes the sale ask for a proof of work: the joins
 * then carry a solved challenge (solved before the clock starts), so the row is the verification's cost.
 *
 * @example
 * npx tsx --import ./local/lua-as-text.mjs bench/queue-joins.ts --runtime bun --seconds 5
 */
import { parseArgs } from "node:util";
import { solveChallenge } from "altcha-lib/v1";
import type { ServerRuntimeName } from "../local/server-runtime";
import { shopperToken } from "./clients/jwt";
import { cpuMicros, treeCpuMicros } from "./measure/proc";
import { RedisStats } from "./measure/redis-stats";
import { startEngine } from "./setup/engine-server";
import { startEnvironment } from "./setup/environment";

const { values } = parseArgs({
  options: {
    runtime: { type: "string", default: "bun" },
    seconds: { type: "string", default: "5" },
    connections: { type: "string", default: "32" },
    pow: { type: "boolean", default: false },
  },
});
const log = (line: string) => console.log(line);
const seconds = Number(values.seconds);
const connections = Number(values.connections);

async function main() {
  const env = await startEnvironment(log, { worker: false });
  const vars = {
    ...env.vars,
    SHOPPER_LIMIT_USER_PER_WINDOW: "1000",
    SHOPPER_LIMIT_IP_PER_WINDOW: "100000",
    CRON_SCHEDULE: "off",
  };
  const engine = await startEngine({ ...env, vars }, values.runtime as ServerRuntimeName, (l) =>
    log(`engine: ${l}`),
  );
  const redis = new RedisStats(env.redisUrl);
  try {
    const now = Date.now();
    const res = await fetch(`${engine.url}/api/admin/sales`, {
      method: "POST",
      headers: { Authorization: `Bearer ${env.adminToken}`, "Content-Type": "application/json" },
      body: JSON.stringify({
        productId: `queue-${now}`,
        name: "Queue bench",
        priceCents: 100,
        stock: 1000,
        perUserLimit: 1,
        startsAt: new Date(now - 1000).toISOString(),
        endsAt: new Date(now + 3_600_000).toISOString(),
        paymentWindowSeconds: 600,
        admission: "queue",
        proofOfWork: values.pow,
      }),
    });
    const sale = (await res.json()) as { saleId: string };
    const users = Array.from({ length: 200_000 }, (_, i) => `j${i}`);
    const tokens = new Map<string, string>();
    const tokenOf = (u: string) => {
      const known = tokens.get(u);
      if (known) return known;
      const minted = shopperToken(env.jwtSecret, u);
      tokens.set(u, minted);
      return minted;
    };
    const bodies = new Map<string, string>();
    if (values.pow) {
      log("solving challenges before the clock starts …");
      for (const u of users.slice(0, 3000)) {
        const c = (await (
          await fetch(`${engine.url}/api/sales/${sale.saleId}/queue/challenge`, {
            headers: { Authorization: `Bearer ${tokenOf(u)}`, "cf-connecting-ip": `10.9.${u.length}.1` },
          })
        ).json()) as {
          algorithm: string;
          challenge: string;
          salt: string;
          signature: string;
          maxnumber: number;
        };
        const s = await solveChallenge(c.challenge, c.salt, c.algorithm, c.maxnumber).promise;
        const { algorithm, challenge, salt, signature } = c;
        bodies.set(
          u,
          JSON.stringify({
            challenge: btoa(JSON.stringify({ algorithm, challenge, number: s?.number, salt, signature })),
          }),
        );
      }
    }
    const pool = values.pow ? users.slice(0, 3000) : users;
    const row = async (name: string, path: (u: string) => string, method: string, population: string[]) => {
      let next = 0;
      let done = 0;
      const statuses: Record<string, number> = {};
      const pgCpu = () => (env.pids.postgres ? treeCpuMicros(env.pids.postgres) : 0);
      const [r0, c0, p0] = [await redis.snapshot(), cpuMicros(engine.child.pid ?? 0, true), pgCpu()];
      const started = performance.now();
      const until = Date.now() + seconds * 1000;
      await Promise.all(
        Array.from({ length: connections }, async (_, k) => {
          while (Date.now() < until && next < population.length) {
            const u = population[next++] as string;
            const r = await fetch(`${engine.url}${path(u)}`, {
              method,
              headers: { Authorization: `Bearer ${tokenOf(u)}`, "cf-connecting-ip": `10.${k}.0.1` },
              body: method === "POST" ? (bodies.get(u) ?? "{}") : undefined,
            });
            await r.arrayBuffer();
            statuses[r.status] = (statuses[r.status] ?? 0) + 1;
            done++;
          }
        }),
      );
      const elapsed = (performance.now() - started) / 1000;
      const d = RedisStats.delta(r0, await redis.snapshot());
      const cpu = cpuMicros(engine.child.pid ?? 0, true) - c0;
      const pgUs = pgCpu() - p0;
      log(
        `${values.runtime} ${name}: ${Math.round(done / elapsed)}/s, answers ${JSON.stringify(statuses)}, Redis ${((d.scripts.calls + d.otherCalls) / done).toFixed(2)} cmds and ${Math.round(d.scripts.usec / done)} µs of scripts per request, engine CPU ${Math.round(cpu / done)} µs and Postgres CPU ${Math.round(pgUs / done)} µs per request`,
      );
      return population.slice(0, done);
    };
    const joined = await row(
      values.pow ? "join (proof of work)" : "join",
      () => `/api/sales/${sale.saleId}/queue`,
      "POST",
      pool,
    );
    await row("ticket read", () => `/api/sales/${sale.saleId}/queue/me`, "GET", joined);
  } finally {
    await redis.close();
    await engine.stop();
    await env.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(2);
});

import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { type RedisProcess, startRedis } from "../../../local/redis-process";
import { startUpstashRedisServer, type UpstashRedisServer } from "../../../local/upstash-redis-server";
import { catalogKeys, saleKeys } from "../../../src/stock/keys";
import type { ApiResponse } from "../../support/api";
import { appForFile } from "../../support/app-per-file";

/**
 * The engine over three Upstash databases (UPSTASH_REDIS_REST_URLS, _TOKENS): the stack's stand-in and
 * two more, each on its own redis-server. Each sale lives whole in one database (its keys' hash slot,
 * as a Cluster places them), so a buy stays one script on one database; sales spread over the
 * databases; the catalog lives in one. One database restarted empty loses only its sales: they are
 * rebuilt from Postgres while the others sell.
 */
const extra: { redis: RedisProcess; upstash: UpstashRedisServer }[] = [];
let servers: RedisProcess[] = [];
const app = appForFile({
  vars: {
    RATE_LIMIT_USER_PER_WINDOW: "1000",
    RATE_LIMIT_IP_PER_WINDOW: "100000",
    RECOVERY_QUIET_SECONDS: "2",
  },
  beforeEngine: async (stack) => {
    const token = stack.vars.UPSTASH_REDIS_REST_TOKEN;
    for (let i = 0; i < 2; i++) {
      const redis = await startRedis();
      extra.push({ redis, upstash: await startUpstashRedisServer({ redisUrl: redis.url, token }) });
    }
    servers = [stack.redis, ...extra.map((e) => e.redis)];
    return {
      UPSTASH_REDIS_REST_URLS: [stack.vars.UPSTASH_REDIS_REST_URL, ...extra.map((e) => e.upstash.url)].join(
        ",",
      ),
      UPSTASH_REDIS_REST_TOKENS: [token, token, token].join(","),
    };
  },
});
afterAll(async () => {
  for (const e of extra) {
    await e.upstash.close();
    await e.redis.stop();
  }
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const code = (res: ApiResponse) => (res.body.error as { code?: string } | undefined)?.code;

/** The redis-servers holding `key` (each asked directly). */
async function holders(key: string): Promise<RedisProcess[]> {
  const found: RedisProcess[] = [];
  for (const server of servers) {
    const client = new Redis(server.url, { maxRetriesPerRequest: 1 });
    try {
      if ((await client.exists(key)) === 1) found.push(server);
    } finally {
      client.disconnect();
    }
  }
  return found;
}

describe("over three Upstash databases", () => {
  it("sells six sales bought at once exactly, each whole in one database, spread over them", async () => {
    const STOCK = 8;
    const sales = await Promise.all(
      Array.from({ length: 6 }, () => app.api.createSale({ stock: STOCK, perUserLimit: 2 })),
    );
    const homes = new Set<number>();
    for (const sale of sales) {
      const k = saleKeys(sale.saleId);
      const [home, ...others] = await holders(k.meta);
      expect(others, "one database per sale").toEqual([]);
      expect(home, "the sale is in a database").toBeDefined();
      expect(await holders(k.stock)).toEqual([home]);
      homes.add(servers.indexOf(home as RedisProcess));
    }
    expect(homes.size, "the sales' databases").toBeGreaterThan(1);
    expect(await holders(catalogKeys.version)).toHaveLength(1);
    expect((await holders(catalogKeys.sales))[0]).toBe((await holders(catalogKeys.version))[0]);

    const answers = await Promise.all(
      sales.flatMap((sale) =>
        Array.from({ length: 12 }, (_, u) =>
          app.api.buy(sale.productToken, `many-${u}`, 1, { "Idempotency-Key": `many-${u}-${sale.saleId}` }),
        ),
      ),
    );
    const by = (status: number) => answers.filter((r) => r.status === status).length;
    expect([by(202), by(410)]).toEqual([6 * STOCK, 6 * (12 - STOCK)]);
    await app.drain(30_000);
    for (const sale of sales) {
      const stats = await app.api.stats(sale.saleId);
      expect(stats.body).toMatchObject({ stock: STOCK, remaining: 0, invariantHolds: true });
    }
    const listed = await app.api.call("GET", "/api/sales");
    const ids = (listed.body.sales as { saleId: string }[]).map((s) => s.saleId);
    for (const sale of sales) expect(ids).toContain(sale.saleId);
  }, 90_000);

  it("one database restarted empty: its sales come back from Postgres with their orders, the others sell throughout", async () => {
    const catalogHome = (await holders(catalogKeys.version))[0];
    let lost = await app.api.createSale({ stock: 10, perUserLimit: 1 });
    let home = (await holders(saleKeys(lost.saleId).meta))[0];
    while (home === catalogHome) {
      lost = await app.api.createSale({ stock: 10, perUserLimit: 1 });
      home = (await holders(saleKeys(lost.saleId).meta))[0];
    }
    let other = await app.api.createSale({ stock: 1_000, perUserLimit: 1 });
    while ((await holders(saleKeys(other.saleId).meta))[0] === home)
      other = await app.api.createSale({ stock: 1_000, perUserLimit: 1 });
    for (let u = 0; u < 4; u++)
      expect((await app.api.buy(lost.productToken, `kept-${u}`, 1)).status).toBe(202);
    await app.drain();

    await home?.restart({ empty: true });
    const answers: string[] = [];
    const elsewhere: number[] = [];
    for (const giveUpAt = Date.now() + 30_000; Date.now() < giveUpAt; await sleep(200)) {
      elsewhere.push((await app.api.buy(other.productToken, `elsewhere-${answers.length}`, 1)).status);
      const res = await app.api.buy(lost.productToken, `back-${answers.length}`, 1);
      answers.push(`${res.status} ${code(res) ?? ""}`.trim());
      if (res.status === 202) break;
    }
    expect(answers.at(-1), answers.join(", ")).toBe("202");
    expect(answers.filter((a) => a !== "202" && a !== "503 UNAVAILABLE")).toEqual([]);
    expect(elsewhere.filter((s) => s !== 202)).toEqual([]);
    await app.drain();
    const stats = await app.api.stats(lost.saleId);
    expect(stats.body).toMatchObject({ stock: 10, remaining: 5, invariantHolds: true });
  }, 90_000);
});

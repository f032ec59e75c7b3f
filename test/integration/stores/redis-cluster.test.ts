import { Cluster } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { type RedisCluster, startRedisCluster } from "../../../local/redis-cluster";
import { codeOf } from "../../../src/stock/codes";
import { catalogKeys, saleKeys } from "../../../src/stock/keys";
import { releaseLockScript } from "../../../src/stock/lock";
import { runScript } from "../../../src/stock/script";
import { connectRedisCluster } from "../../../src/stores/redis-tcp";
import { appForFile } from "../../support/app-per-file";
import { createDrop } from "../../support/variants";

/**
 * The engine on Deno or Bun over a real 3-master Redis Cluster (REDIS_CLUSTER_NODES), one seed given:
 * sales spread over the masters, each sale's keys in one slot, so every buy is one script on one node
 * and the sale list's pipelines are split by slot. A burst over several sales at once sells each one's
 * stock exactly, within the per-user limits, and the orders reach Postgres.
 */
let cluster: RedisCluster | undefined;
const app = appForFile({
  vars: { RATE_LIMIT_USER_PER_WINDOW: "1000", RATE_LIMIT_IP_PER_WINDOW: "100000" },
  beforeEngine: async () => {
    cluster = await startRedisCluster({ masters: 3 });
    return { REDIS_CLUSTER_NODES: cluster.urls[0] as string };
  },
});
afterAll(async () => {
  await cluster?.stop();
});

const SALES = 6;
const STOCK = 12;
const SHOPPERS = 20;

/**
 * One unit, as a shop's client buys: a 503 (a store slow on a loaded machine) is asked again with the same
 * Idempotency-Key, so the answer counted is the attempt's one outcome.
 */
async function buyAsAClientWould(productToken: string, userId: string) {
  const key = `cluster-${userId}-${productToken}`;
  for (let attempt = 1; ; attempt++) {
    const res = await app.api.buy(productToken, userId, 1, { "Idempotency-Key": key });
    if (res.status !== 503 || attempt === 5) return res;
    await new Promise((r) => setTimeout(r, 200 * attempt));
  }
}

/** A direct client of the cluster, for inspection. */
const adminClient = () =>
  new Cluster([{ host: "127.0.0.1", port: Number(new URL(cluster?.urls[0] ?? "redis://x:1").port) }]);

/** The port of the master that holds `key` (CLUSTER KEYSLOT, then the slot's master in CLUSTER SLOTS). */
async function masterOf(admin: Cluster, key: string): Promise<number> {
  const slot = Number(await admin.call("CLUSTER", "KEYSLOT", key));
  const ranges = (await admin.call("CLUSTER", "SLOTS")) as [number, number, [string, number]][];
  const range = ranges.find(([from, to]) => slot >= from && slot <= to);
  return range ? range[2][1] : -1;
}

describe("over a Redis Cluster of three masters", () => {
  it(`sells ${SALES} sales bought at once exactly, each on its own slot, spread over the masters`, async () => {
    const sales = await Promise.all(
      Array.from({ length: SALES }, () => app.api.createSale({ stock: STOCK, perUserLimit: 2 })),
    );
    const admin = adminClient();
    try {
      const masters = await Promise.all(sales.map((s) => masterOf(admin, saleKeys(s.saleId).stock)));
      expect(new Set(masters).size, "the sales' masters").toBeGreaterThan(1);
      for (const sale of sales) {
        const k = saleKeys(sale.saleId);
        const slots = await Promise.all(
          [k.meta, k.stock, k.ledger, k.outbox, k.holdings].map((key) =>
            admin.call("CLUSTER", "KEYSLOT", key),
          ),
        );
        expect(new Set(slots).size).toBe(1);
        expect(await admin.exists(k.meta), "the sale lives in the cluster").toBe(1);
      }

      // the catalog's keys live together: lost together, the filter and its version written in one place
      const catalogSlots = await Promise.all(
        Object.values(catalogKeys).map((key) => admin.call("CLUSTER", "KEYSLOT", key)),
      );
      expect(new Set(catalogSlots).size).toBe(1);

      // every shopper asks every sale for 1 unit, all at once
      const answers = await Promise.all(
        sales.flatMap((sale) =>
          Array.from({ length: SHOPPERS }, (_, u) =>
            buyAsAClientWould(sale.productToken, `shopper-${u}`).then((r) => ({ saleId: sale.saleId, r })),
          ),
        ),
      );
      for (const sale of sales) {
        const mine = answers.filter((a) => a.saleId === sale.saleId);
        const statuses = mine.map((a) => a.r.status);
        expect(statuses.filter((s) => s === 202)).toHaveLength(STOCK);
        expect(statuses.filter((s) => s === 410 || s === 409)).toHaveLength(SHOPPERS - STOCK);
        expect(await admin.get(saleKeys(sale.saleId).stock)).toBe("0");
      }

      // a shopper's second unit of a sale is within the limit of 2, the third is not
      const extra = await app.api.createSale({ stock: 5, perUserLimit: 2 });
      expect((await app.api.buy(extra.productToken, "limited", 2)).status).toBe(202);
      const over = await app.api.buy(extra.productToken, "limited", 1);
      expect([over.status, (over.body.error as { code: string }).code]).toEqual([409, "ALREADY_PURCHASED"]);

      // the sale list reads every sale, whichever master holds it
      const list = await app.api.call("GET", "/api/sales");
      expect(list.status).toBe(200);
      const listed = new Set((list.body.sales as { saleId: string }[]).map((s) => s.saleId));
      for (const sale of sales) expect(listed.has(sale.saleId)).toBe(true);

      await app.drain(30_000);
      const rows = await app.db.query<{ sale_id: string; n: string }>(
        "SELECT sale_id, count(*) AS n FROM orders WHERE sale_id = ANY($1) GROUP BY sale_id",
        [sales.map((s) => s.saleId)],
      );
      expect(rows.rows.map((r) => Number(r.n))).toEqual(Array(SALES).fill(STOCK));
    } finally {
      admin.disconnect();
    }
  });

  it("reserves a cart of a drop of variants all or nothing, on the drop's one slot", async () => {
    const variants = [
      { variantId: "S", name: "Small", priceCents: 1000, stock: 1 },
      { variantId: "M", name: "Medium", priceCents: 1200, stock: 3 },
    ];
    const drop = (await createDrop(app, variants, { perUserLimit: 3 })) as unknown as {
      saleId: string;
      productToken: string;
    };
    const cart = (userId: string) =>
      app.api.call("POST", `/api/buy/${drop.productToken}`, {
        token: userId,
        body: {
          items: [
            { variantId: "S", quantity: 1 },
            { variantId: "M", quantity: 1 },
          ],
        },
      });
    const { shopperToken } = await import("../../support/shopper");
    expect((await cart(await shopperToken("first"))).status).toBe(202);
    const second = await cart(await shopperToken("second"));
    expect(second.status).toBe(409);
    const admin = adminClient();
    try {
      expect(await admin.hgetall(saleKeys(drop.saleId).variantStock)).toEqual({ S: "0", M: "2" });
    } finally {
      admin.disconnect();
    }
  });
});

describe("the Cluster adapter (connectRedisCluster)", () => {
  it("answers a pipeline over many slots in order, TIME included, and a transaction on one sale's slot", async () => {
    const redis = connectRedisCluster([cluster?.urls[1] as string]);
    try {
      const ids = Array.from({ length: 12 }, (_, i) => `adapter-${i}`);
      for (const [i, id] of ids.entries()) await redis.set(saleKeys(id).stock, i);
      const pipe = redis.pipeline();
      for (const id of ids) pipe.get(saleKeys(id).stock).time();
      const replies = await pipe.exec<unknown[]>();
      expect(replies.filter((_, i) => i % 2 === 0)).toEqual(ids.map((_, i) => String(i)));
      expect(replies.filter((_, i) => i % 2 === 1).every((t) => Array.isArray(t) && t.length === 2)).toBe(
        true,
      );

      const k = saleKeys("adapter-0");
      const [stock, meta, now] = await redis
        .multi()
        .incr(k.stock)
        .hgetall(k.meta)
        .time()
        .exec<[number, unknown, unknown]>();
      expect([stock, meta, Array.isArray(now)]).toEqual([1, [], true]);

      // one clock for every process: TIME read on one fixed slot's master
      const [seconds, micros] = await redis.time();
      expect(Math.abs(Number(seconds) * 1000 + Number(micros) / 1000 - Date.now())).toBeLessThan(5_000);

      // a failed command rejects the pipeline after the others, on other slots, ran
      await redis.set(saleKeys("adapter-1").meta, "a string");
      await expect(
        redis.pipeline().incr(saleKeys("adapter-2").stock).hget(saleKeys("adapter-1").meta, "f").exec(),
      ).rejects.toThrow(/WRONGTYPE/);
      expect(await redis.get(saleKeys("adapter-2").stock)).toBe("3");
    } finally {
      await redis.close();
    }
  });

  it("falls back from EVALSHA to EVAL on whichever master a script's keys live", async () => {
    const redis = connectRedisCluster([cluster?.urls[2] as string]);
    try {
      const admin = adminClient();
      try {
        await Promise.all(admin.nodes("master").map((node) => node.script("FLUSH")));
        const ports = new Set<number>();
        for (let i = 0; i < 12; i++) {
          const lock = `${saleKeys(`script-${i}`).meta}:lock`;
          ports.add(await masterOf(admin, lock));
          const reply = await runScript(redis, releaseLockScript, [lock], ["token"]);
          expect(codeOf("release-lock", reply, ["OK", "NOT_HELD"] as const)).toBe("NOT_HELD");
        }
        expect(ports.size).toBeGreaterThan(1);
      } finally {
        admin.disconnect();
      }
    } finally {
      await redis.close();
    }
  });
});

describe("a Redis Cluster that is down", () => {
  it("fails calls at once instead of queueing them until it returns", async () => {
    const down = await startRedisCluster({ masters: 3 });
    const redis = connectRedisCluster([down.urls[0] as string]);
    try {
      expect(await redis.set(saleKeys("down").stock, 1)).toBe("OK");
      for (const node of down.nodes) await node.kill();
      const startedAt = Date.now();
      const calls = await Promise.allSettled([
        redis.get(saleKeys("down").stock),
        redis.pipeline().get(saleKeys("down").stock).get(saleKeys("other").stock).exec(),
        runScript(redis, releaseLockScript, [`${saleKeys("down").meta}:lock`], ["t"]),
      ]);
      expect(calls.map((c) => c.status)).toEqual(["rejected", "rejected", "rejected"]);
      expect(Date.now() - startedAt).toBeLessThan(3_000);
    } finally {
      await redis.close();
      await down.stop();
    }
  });
});

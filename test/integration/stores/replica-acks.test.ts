import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { type RedisCluster, startRedisCluster } from "../../../local/redis-cluster";
import type { RedisProcess } from "../../../local/redis-process";
import { saleKeys } from "../../../src/stock/keys";
import { connectRedisCluster } from "../../../src/stores/redis-tcp";
import { expectEveryAcknowledgedWritten } from "../../support/acknowledged-orders";
import type { ApiResponse } from "../../support/api";
import { appForFile } from "../../support/app-per-file";
import { homeOf as homeOfKey } from "../../support/cluster-nodes";

/**
 * REDIS_REPLICA_ACKS=1 over a real Redis Cluster of three masters with a replica each: a script counts
 * only once the sale's replica holds its writes (WAIT on the node that ran it). A buy no replica holds is
 * answered 503 and undone; a master killed mid-rush fails over to its replica with every acknowledged
 * order in it, while the sales on the other masters keep selling.
 */
let cluster: RedisCluster | undefined;
const app = appForFile({
  vars: {
    RATE_LIMIT_USER_PER_WINDOW: "1000",
    RATE_LIMIT_IP_PER_WINDOW: "100000",
    REDIS_REPLICA_ACKS: "1",
    // a 503 sooner: the failover test's shoppers ask again through the outage
    BUY_RESOLVE_WINDOW_MS: "3000",
  },
  beforeEngine: async () => {
    cluster = await startRedisCluster({ masters: 3, replicas: 1 });
    return { REDIS_CLUSTER_NODES: cluster.urls.join(",") };
  },
});
afterAll(async () => {
  await cluster?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const code = (res: ApiResponse) => (res.body.error as { code?: string } | undefined)?.code;

const homeOf = (key: string) => homeOfKey(cluster, key);

/** Reads one key on a replica itself (READONLY), not through its master. */
async function readOnReplica(replica: RedisProcess, key: string): Promise<string | null> {
  const client = new Redis(replica.url, { maxRetriesPerRequest: 1 });
  try {
    await client.call("READONLY");
    return await client.get(key);
  } finally {
    client.disconnect();
  }
}

/** One unit, as a shop's client buys: a 503 is asked again with the same Idempotency-Key, for up to 60 s. */
async function buyAsAClientWould(productToken: string, userId: string, seen: ApiResponse[]) {
  const giveUpAt = Date.now() + 60_000;
  for (;;) {
    const res = await app.api.buy(productToken, userId, 1, { "Idempotency-Key": `acks-${userId}` });
    seen.push(res);
    if (res.status !== 503 || Date.now() > giveUpAt) return res;
    await sleep(250);
  }
}

describe("the acknowledged scripts of the Cluster adapter", () => {
  it("wait once per batch, not once per script: 400 scripts at once, every one acknowledged", async () => {
    const redis = connectRedisCluster(cluster?.urls ?? [], {
      replicaAcks: { replicas: 1, timeoutMs: 1_000 },
    });
    const key = saleKeys("acks-batch").stock;
    const { master } = await homeOf(key);
    const direct = new Redis(master.url);
    try {
      await redis.set(key, 0);
      await direct.config("RESETSTAT");
      const replies = await Promise.all(
        Array.from({ length: 400 }, () => redis.eval("return redis.call('INCR', KEYS[1])", [key], [])),
      );
      expect(replies.map(Number).sort((a, b) => a - b)).toEqual(Array.from({ length: 400 }, (_, i) => i + 1));
      const waits = Number(/cmdstat_wait:calls=(\d+)/.exec(await direct.info("commandstats"))?.[1] ?? 0);
      expect(waits).toBeGreaterThan(0);
      expect(waits).toBeLessThanOrEqual(40);
    } finally {
      direct.disconnect();
      await redis.close();
    }
  });
});

describe("a script counts once a replica holds it (REDIS_REPLICA_ACKS=1)", () => {
  it("answers a buy only once the sale's replica holds it: none while the replica is stopped, 202 after", async () => {
    const sale = await app.api.createSale({ stock: 10, perUserLimit: 2 });
    const { replica } = await homeOf(saleKeys(sale.saleId).stock);
    if (!replica) throw new Error("the sale's master has no replica");
    const info = new Redis(replica.url);
    const pid = Number(/process_id:(\d+)/.exec(await info.info("server"))?.[1]);
    info.disconnect();
    let answeredAt = 0;
    let resumedAt = 0;
    process.kill(pid, "SIGSTOP");
    try {
      const buying = app.api.buy(sale.productToken, "on-replica", 1).then((res) => {
        answeredAt = Date.now();
        return res;
      });
      await sleep(1_000);
      resumedAt = Date.now();
      process.kill(pid, "SIGCONT");
      const res = await buying;
      expect(res.status).toBe(202);
      expect(answeredAt, "answered after the replica came back").toBeGreaterThanOrEqual(resumedAt);
    } finally {
      if (!resumedAt) process.kill(pid, "SIGCONT");
    }
    expect(await readOnReplica(replica, saleKeys(sale.saleId).stock)).toBe("9");
  });

  it("keeps every acknowledged order through a failover mid-rush, and the other masters sell throughout", async () => {
    const STOCK = 40;
    const SHOPPERS = 60;
    const sale = await app.api.createSale({ stock: STOCK, perUserLimit: 1 });
    const home = await homeOf(saleKeys(sale.saleId).stock);
    // a second sale on another master: its shoppers are not touched by the failover
    let other = await app.api.createSale({ stock: 1_000, perUserLimit: 1 });
    while ((await homeOf(saleKeys(other.saleId).stock)).master === home.master)
      other = await app.api.createSale({ stock: 1_000, perUserLimit: 1 });

    const seen: ApiResponse[] = [];
    const acknowledged = new Set<string>();
    let killedAt = 0;
    const otherDuringOutage: number[] = [];
    const shoppers = Array.from({ length: SHOPPERS }, async (_, u) => {
      await sleep(u * 40); // a rush spread over 2.4 s, the master killed a third of the way in
      const res = await buyAsAClientWould(sale.productToken, `rush-${u}`, seen);
      if (res.status === 202) acknowledged.add(String(res.body.orderId));
      return res;
    });
    const master = async () => (await homeOf(saleKeys(sale.saleId).stock).catch(() => null))?.master;
    const killer = (async () => {
      await sleep(800);
      killedAt = Date.now();
      await home.master.kill();
      // its supervisor starts it again once the replica has taken over: it rejoins as that one's replica,
      // and the sale counts writes again once it holds them. (Started before the promotion, a node that
      // keeps nothing on disk would come back an empty master: a store lost, which buys answer 503 until
      // its sales are rebuilt; run masters with appendonly yes.)
      for (const giveUpAt = Date.now() + 30_000; (await master()) !== home.replica && Date.now() < giveUpAt; )
        await sleep(200);
      await home.master.restart({ empty: false });
    })();
    const elsewhere = (async () => {
      await killer;
      for (let i = 0; Date.now() - killedAt < 6_000; i++) {
        const res = await app.api.buy(other.productToken, `elsewhere-${i}`, 1);
        otherDuringOutage.push(res.status);
        await sleep(100);
      }
    })();
    const finals = await Promise.all(shoppers);
    await Promise.all([killer, elsewhere]);
    // the replica took over the slot
    for (let i = 0; i < 100 && (await master()) !== home.replica; i++) await sleep(100);
    expect(await master()).toBe(home.replica);

    // the failover was felt mid-rush, and every shopper got a final answer
    expect(
      seen.some((r) => r.status === 503 && r.headers.get("Retry-After")),
      "503s during the failover",
    ).toBe(true);
    const answers = finals.map((r) => `${r.status} ${code(r) ?? ""}`.trim());
    expect(
      answers.filter((a) => !a.startsWith("202") && !a.startsWith("410") && !a.startsWith("409")),
    ).toEqual([]);
    // the other master's sale sold during the outage
    expect(
      otherDuringOutage.filter((s) => s === 202).length,
      JSON.stringify(otherDuringOutage),
    ).toBeGreaterThan(0);

    // every unit sold once, every acknowledged order written: none lost with the old master
    await expectEveryAcknowledgedWritten(app, sale.saleId, acknowledged, STOCK);
  }, 180_000);

  it("answers 503 to a buy no replica holds, and leaves nothing reserved on the master", async () => {
    // a sale on a master that still has its replica (the failover above left one without)
    let sale = await app.api.createSale({ stock: 10, perUserLimit: 2 });
    while (!(await homeOf(saleKeys(sale.saleId).stock)).replica)
      sale = await app.api.createSale({ stock: 10, perUserLimit: 2 });
    const k = saleKeys(sale.saleId);
    const home = await homeOf(k.stock);
    expect((await app.api.buy(sale.productToken, "before", 1)).status).toBe(202);
    await home.replica?.kill();

    const res = await app.api.buy(sale.productToken, "unreplicated", 1);
    expect([res.status, code(res)]).toEqual([503, "UNAVAILABLE"]);
    expect(Number(res.headers.get("Retry-After"))).toBeGreaterThanOrEqual(1);
    // the script ran on the master and was voided there (by the route, or by the void it handed to QStash
    // when its own void's writes were not acknowledged either): the sale as it was after the first buy
    const master = new Redis(home.master.url);
    try {
      for (let i = 0; i < 100 && (await master.get(k.stock)) !== "9"; i++) await sleep(200);
      expect(await master.get(k.stock)).toBe("9");
      expect(Object.keys(await master.hgetall(k.holdings))).toEqual(["before"]);
      const queued = Object.values(await master.hgetall(k.orders));
      expect(queued.filter((doc) => doc.includes('"unreplicated"'))).toEqual([]);
    } finally {
      master.disconnect();
    }
  }, 60_000);
});

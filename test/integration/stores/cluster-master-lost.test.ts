import { afterAll, describe, expect, it } from "vitest";
import { type RedisCluster, startRedisCluster } from "../../../local/redis-cluster";
import { catalogKeys, saleKeys } from "../../../src/stock/keys";
import { expectEveryAcknowledgedWritten } from "../../support/acknowledged-orders";
import type { ApiResponse } from "../../support/api";
import { appForFile } from "../../support/app-per-file";
import { clusterAdmin, homeOf } from "../../support/cluster-nodes";
import { openEvents } from "../../support/sse";

/**
 * A master of a Redis Cluster with no replica, restarted empty (SIGKILL, then started again with its
 * node config and no data): its slots come back served and hold nothing. The catalog, on another master,
 * still lists the sales that lived there. Those sales are noticed lost by their own keys, rebuilt from
 * Postgres alone, and sell again with every acknowledged order counted; meanwhile their shoppers and
 * readers get 503 with Retry-After, never an answer that says the sale is gone or sold out, and the sales
 * on the other masters sell throughout.
 */
let cluster: RedisCluster | undefined;
const app = appForFile({
  vars: {
    RATE_LIMIT_USER_PER_WINDOW: "1000",
    RATE_LIMIT_IP_PER_WINDOW: "100000",
    RECOVERY_QUIET_SECONDS: "2",
    BUY_RESOLVE_WINDOW_MS: "3000",
  },
  beforeEngine: async () => {
    cluster = await startRedisCluster({ masters: 3 });
    return { REDIS_CLUSTER_NODES: cluster.urls.join(",") };
  },
});
afterAll(async () => {
  await cluster?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const code = (res: ApiResponse) => (res.body.error as { code?: string } | undefined)?.code;
const masterOf = async (saleId: string) => (await homeOf(cluster, saleKeys(saleId).stock)).master;

describe("a master restarted empty, with no replica", () => {
  it("its sales are rebuilt from Postgres with every order kept; nobody is told they are gone; the others sell throughout", async () => {
    const STOCK = 20;
    const catalogHome = (await homeOf(cluster, catalogKeys.version)).master;
    // a sale on a master that does not hold the catalog (the catalog's own loss is the one-store case)
    let lost = await app.api.createSale({ stock: STOCK, perUserLimit: 1 });
    while ((await masterOf(lost.saleId)) === catalogHome)
      lost = await app.api.createSale({ stock: STOCK, perUserLimit: 1 });
    const home = await masterOf(lost.saleId);
    let other = await app.api.createSale({ stock: 1_000, perUserLimit: 1 });
    while ((await masterOf(other.saleId)) === home)
      other = await app.api.createSale({ stock: 1_000, perUserLimit: 1 });

    const acknowledged = new Set<string>();
    const buy = async (userId: string) => {
      const res = await app.api.buy(lost.productToken, userId, 1, { "Idempotency-Key": `lost-${userId}` });
      if (res.status === 202) acknowledged.add(String(res.body.orderId));
      return res;
    };
    for (let u = 0; u < 5; u++) expect((await buy(`written-${u}`)).status).toBe(202);
    await app.drain();
    // two more whose order writes may still be on their way when the master goes
    for (let u = 0; u < 2; u++) expect((await buy(`in-flight-${u}`)).status).toBe(202);

    // shoppers' pages read the sale list (the process keeps what it read)
    expect((await app.api.call("GET", "/api/sales")).status).toBe(200);

    await home.restart({ empty: true });
    const killedAt = Date.now();

    // readers first, before any buy notices the loss: the sale is there, or being restored (503)
    const reads: string[] = [];
    for (const until = Date.now() + 2_000; Date.now() < until; await sleep(100)) {
      const read = await app.api.call("GET", `/api/sales/${lost.saleId}`);
      const listed = await app.api.call("GET", "/api/sales");
      const stream = await fetch(`${app.worker.url}/api/sales/${lost.saleId}/events`);
      await stream.body?.cancel();
      reads.push(`stream ${stream.status}`);
      const listStream = await openEvents(`${app.worker.url}/api/sales/events`);
      const first = await listStream.next();
      listStream.close();
      reads.push(
        (first.json.sales as { saleId: string }[]).some((s) => s.saleId === lost.saleId)
          ? "listed"
          : "unlisted",
      );
      reads.push(`${read.status} ${code(read) ?? ""}`.trim());
      if (listed.status === 200)
        reads.push(
          (listed.body.sales as { saleId: string }[]).some((s) => s.saleId === lost.saleId)
            ? "listed"
            : "unlisted",
        );
      else reads.push(`list ${listed.status}`);
    }
    expect(
      reads.filter(
        (r) => !["200", "503 UNAVAILABLE", "listed", "list 503", "stream 200", "stream 503"].includes(r),
      ),
    ).toEqual([]);

    // the other master's sale sells while the lost one is noticed and rebuilt
    const otherAnswers: number[] = [];
    const elsewhere = (async () => {
      for (let i = 0; Date.now() - killedAt < 5_000; i++) {
        otherAnswers.push((await app.api.buy(other.productToken, `elsewhere-${i}`, 1)).status);
        await sleep(100);
      }
    })();
    // the lost sale's shoppers and readers: 503 with Retry-After until it is back, then sold as before
    const during: string[] = [];
    let back: ApiResponse | undefined;
    for (let i = 0; Date.now() - killedAt < 30_000; i++) {
      const read = await app.api.call("GET", `/api/sales/${lost.saleId}`);
      const res = await buy(`after-${i}`);
      for (const r of [read, res]) {
        if (r.status === 503) expect(Number(r.headers.get("Retry-After"))).toBeGreaterThanOrEqual(1);
        else during.push(`${r.status} ${code(r) ?? ""}`.trim());
      }
      if (res.status === 202) {
        back = res;
        break;
      }
      await sleep(200);
    }
    await elsewhere;
    expect(back?.status, "the lost sale sells again").toBe(202);
    expect(during.filter((a) => a !== "200" && a !== "202")).toEqual([]);
    expect(otherAnswers.filter((s) => s === 202).length, JSON.stringify(otherAnswers)).toBeGreaterThan(0);
    expect(
      otherAnswers.filter((s) => s !== 202),
      "the other master's sale",
    ).toEqual([]);

    // the rest of the stock, exactly: the orders acknowledged before the loss still hold their units
    for (let u = 0; ; u++) {
      const res = await buy(`rest-${u}`);
      if (res.status === 410) break;
      expect([res.status, code(res)]).toEqual([202, undefined]);
      expect(u).toBeLessThan(STOCK);
    }
    await expectEveryAcknowledgedWritten(app, lost.saleId, acknowledged, STOCK);
  }, 120_000);
});

describe("the catalog's master restarted empty, with no replica", () => {
  it("the catalog is rebuilt from Postgres while the sales on the other masters keep their state; buyers get 503 meanwhile, never 404", async () => {
    const catalogHome = (await homeOf(cluster, catalogKeys.version)).master;
    let kept = await app.api.createSale({ stock: 10, perUserLimit: 1 });
    while ((await masterOf(kept.saleId)) === catalogHome)
      kept = await app.api.createSale({ stock: 10, perUserLimit: 1 });
    for (let u = 0; u < 3; u++)
      expect((await app.api.buy(kept.productToken, `kept-${u}`, 1)).status).toBe(202);

    await catalogHome.restart({ empty: true });
    // an operator creates a sale at once: its registration makes a catalog version again, which must
    // not hide that the catalog lost every other sale
    // (the cluster answers CLUSTERDOWN for a moment while the node rejoins: the operator tries again)
    for (let attempt = 1; ; attempt++) {
      const created = await app.api.createSale({ stock: 5, perUserLimit: 1 }).catch(() => null);
      if (created) break;
      expect(attempt).toBeLessThan(20);
      await sleep(250);
    }
    const answers: string[] = [];
    let sold: ApiResponse | undefined;
    for (const giveUpAt = Date.now() + 30_000; Date.now() < giveUpAt; await sleep(200)) {
      const res = await app.api.buy(kept.productToken, `after-catalog-${answers.length}`, 1);
      answers.push(`${res.status} ${code(res) ?? ""}`.trim());
      if (res.status === 503) expect(Number(res.headers.get("Retry-After"))).toBeGreaterThanOrEqual(1);
      if (res.status === 202) {
        sold = res;
        break;
      }
    }
    expect(sold?.status, answers.join(", ")).toBe(202);
    expect(answers.filter((a) => a !== "202" && a !== "503 UNAVAILABLE")).toEqual([]);
    // readers: the sale is there, or being restored (503), while the catalog comes back
    const reads: string[] = [];
    for (const until = Date.now() + 2_000; Date.now() < until; await sleep(100)) {
      const read = await app.api.call("GET", `/api/sales/${kept.saleId}`);
      reads.push(`${read.status} ${code(read) ?? ""}`.trim());
    }
    expect(reads.filter((r) => r !== "200" && r !== "503 UNAVAILABLE")).toEqual([]);
    const admin = clusterAdmin(cluster);
    try {
      for (let i = 0; i < 50 && !(await admin.exists(catalogKeys.version)); i++) await sleep(200);
      expect(await admin.exists(catalogKeys.version), "the catalog rebuilt").toBe(1);
      expect(await admin.sismember(catalogKeys.sales, kept.saleId)).toBe(1);
    } finally {
      admin.disconnect();
    }
    // the sale on its own master was not rebuilt: it kept its reservations and its units
    const stats = await app.api.stats(kept.saleId);
    expect(stats.body).toMatchObject({ stock: 10, remaining: 6, invariantHolds: true });
  }, 90_000);
});

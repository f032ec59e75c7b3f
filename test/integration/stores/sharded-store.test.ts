import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RedisProcess, startRedis } from "../../../local/redis-process";
import { catalogKeys, saleKeys } from "../../../src/stock/keys";
import { connectRedisTcp, type RedisTcpStore } from "../../../src/stores/redis-tcp";
import { shardedStore, storeIndexOf } from "../../../src/stores/sharded-store";

/**
 * shardedStore over three real redis-servers: each key goes to the store of its hash slot, a pipeline
 * spanning stores answers in the caller's order, a failure in one store's batch rejects the pipeline,
 * a transaction spanning stores is refused before anything is sent, TIME and keyless scripts go to the
 * store of the `{clock}` slot.
 */
let servers: RedisProcess[] = [];
let clients: RedisTcpStore[] = [];

beforeAll(async () => {
  servers = await Promise.all([startRedis(), startRedis(), startRedis()]);
  clients = servers.map((s) => connectRedisTcp(s.url));
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await Promise.all(servers.map((s) => s.stop()));
});

/** Sale ids whose keys land in each of the three stores. */
function saleIdsByStore(): string[] {
  const found: string[] = [];
  for (let i = 0; found.filter(Boolean).length < 3; i++) {
    const id = `s${i}`;
    const at = storeIndexOf(saleKeys(id).meta, 3);
    found[at] ??= id;
  }
  return found;
}

describe("one store over several", () => {
  it("puts every key of a sale in the store of its slot, and answers a pipeline across stores in order", async () => {
    const store = shardedStore(clients);
    const ids = saleIdsByStore();
    const pipe = store.pipeline();
    for (const [i, id] of ids.entries())
      pipe.set(saleKeys(id).stock, String(10 + i)).hset(saleKeys(id).meta, { n: i });
    await pipe.exec();
    for (const [i, id] of ids.entries()) {
      expect(await clients[i]?.get(saleKeys(id).stock), `sale ${id} in store ${i}`).toBe(String(10 + i));
      for (const [j, other] of clients.entries())
        if (j !== i) expect(await other.exists(saleKeys(id).stock, saleKeys(id).meta)).toBe(0);
    }
    const read = store.pipeline();
    for (const id of [...ids].reverse()) read.get(saleKeys(id).stock).hget(saleKeys(id).meta, "n");
    read.time();
    const replies = await read.exec<unknown[]>();
    expect(replies.slice(0, 6)).toEqual(["12", "2", "11", "1", "10", "0"]);
    expect((replies[6] as unknown[]).length).toBe(2);
  });

  it("rejects a pipeline whose batch failed in one store; the other stores' commands ran", async () => {
    const store = shardedStore(clients);
    const [a, b] = saleIdsByStore() as [string, string];
    await store.set(saleKeys(a).meta, "a string, not a hash");
    await expect(
      store.pipeline().set(saleKeys(b).stock, "ran").hget(saleKeys(a).meta, "field").exec(),
    ).rejects.toThrow(/WRONGTYPE/);
    expect(await store.get(saleKeys(b).stock)).toBe("ran");
  });

  it("refuses a transaction spanning stores before anything is sent; one sale's runs in its store", async () => {
    const store = shardedStore(clients);
    const [a, b] = saleIdsByStore() as [string, string];
    await expect(
      store.multi().set(saleKeys(a).ledger, "x").set(saleKeys(b).ledger, "y").exec(),
    ).rejects.toThrow(/one store/);
    expect(await store.exists(saleKeys(a).ledger)).toBe(0);
    expect(await store.exists(saleKeys(b).ledger)).toBe(0);
    expect(
      await store
        .multi()
        .set(saleKeys(a).ledger, "x")
        .incr(`${saleKeys(a).ledger}:n`)
        .exec(),
    ).toEqual(["OK", 1]);
  });

  it("counts DEL and EXISTS of keys in several stores in each; a MULTI's TIME rides with its sale's keys", async () => {
    const store = shardedStore(clients);
    const [a, b, c] = saleIdsByStore() as [string, string, string];
    const keys = [a, b, c].map((id) => `${saleKeys(id).meta}:counted`);
    for (const key of keys) await store.set(key, "1");
    expect(await store.exists(...keys)).toBe(3);
    expect(await store.del(keys[0] as string, keys[2] as string)).toBe(2);
    expect(await store.exists(...keys)).toBe(1);
    const [clock, value] = await store
      .multi()
      .time()
      .get(keys[1] as string)
      .exec<[unknown[], string]>();
    expect([clock.length, value]).toEqual([2, "1"]);
  });

  it("runs a script in its keys' store, reads one clock, and keeps the catalog's keys together", async () => {
    const store = shardedStore(clients);
    const [a] = saleIdsByStore() as [string];
    const at = storeIndexOf(saleKeys(a).meta, 3);
    const lua = "return redis.call('SET', KEYS[1], ARGV[1])";
    expect(await store.eval(lua, [saleKeys(a).outbox], ["scripted"])).toBe("OK");
    expect(await clients[at]?.get(saleKeys(a).outbox)).toBe("scripted");
    const [seconds] = await store.time();
    expect(Math.abs(Number(seconds) - Date.now() / 1000)).toBeLessThan(5);
    const catalog = new Set(Object.values(catalogKeys).map((k) => storeIndexOf(k, 3)));
    expect(catalog.size).toBe(1);
  });
});

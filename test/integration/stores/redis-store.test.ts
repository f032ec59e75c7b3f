/**
 * The same RedisStore assertions against both adapters, over a real redis-server: the Upstash REST
 * client (configured as src/stores/with-redis.ts does, through the local Upstash stand-in) and the TCP adapter.
 * Equal expectations mean equal reply shapes. Then what only TCP has to get right: the NOSCRIPT
 * fallback on its own connection, and failing fast (not queueing) while redis-server is down.
 */
import { createHash } from "node:crypto";
import { Redis as Upstash } from "@upstash/redis/cloudflare";
import IORedis from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RedisProcess, startRedis } from "../../../local/redis-process";
import { startUpstashRedisServer, type UpstashRedisServer } from "../../../local/upstash-redis-server";
import { defineScript, runScript } from "../../../src/stock/script";
import { toRecord } from "../../../src/stores/redis-reply";
import type { RedisStore } from "../../../src/stores/redis-store";
import { connectRedisTcp, type RedisTcpStore } from "../../../src/stores/redis-tcp";

const token = "test-upstash-token";
let server: RedisProcess;
let rest: UpstashRedisServer;
let admin: IORedis;
let tcp: RedisTcpStore;
const stores: Record<string, RedisStore> = {};

beforeAll(async () => {
  server = await startRedis({ port: 0 });
  rest = await startUpstashRedisServer({ port: 0, redisUrl: server.url, token });
  admin = new IORedis(server.url);
  admin.on("error", () => {});
  tcp = connectRedisTcp(server.url);
  stores.upstash = new Upstash({
    url: rest.url,
    token,
    automaticDeserialization: false,
    enableTelemetry: false,
    retry: { retries: 2, backoff: (n) => 25 * 2 ** n },
    signal: () => AbortSignal.timeout(2_000),
  });
  stores.tcp = tcp;
});

afterAll(async () => {
  await tcp?.close();
  admin?.disconnect();
  await rest?.close();
  await server?.stop();
});

describe.each(["upstash", "tcp"])("RedisStore over %s", (name) => {
  const k = (key: string) => `${name}:${key}`;
  const redis = () => stores[name] as RedisStore;

  it("keeps strings as strings, counts as numbers, missing values as null", async () => {
    expect(await redis().get(k("none"))).toBeNull();
    expect(await redis().set(k("s"), "hello €")).toBe("OK");
    expect(await redis().get(k("s"))).toBe("hello €");
    expect(await redis().set(k("n"), 5)).toBe("OK");
    expect(await redis().get(k("n"))).toBe("5");
    expect(await redis().set(k("j"), '{"a":1}')).toBe("OK");
    expect(await redis().get(k("j"))).toBe('{"a":1}');
    expect(await redis().incr(k("n"))).toBe(6);
    expect(await redis().exists(k("s"))).toBe(1);
    expect(await redis().exists(k("none"))).toBe(0);
    expect(await redis().del(k("s"), k("none"))).toBe(1);
  });

  it("answers SET NX/PX with OK or null and sets the expiry", async () => {
    expect(await redis().set(k("lock"), "a", { nx: true, px: 60_000 })).toBe("OK");
    expect(await redis().set(k("lock"), "b", { nx: true, px: 60_000 })).toBeNull();
    expect(await redis().get(k("lock"))).toBe("a");
    expect(await admin.pttl(k("lock"))).toBeGreaterThan(50_000);
  });

  it("answers hashes as raw flat arrays, a missing hash as []", async () => {
    expect(await redis().hset(k("h"), { a: "1", b: "x" })).toBe(2);
    expect(await redis().hget(k("h"), "a")).toBe("1");
    expect(await redis().hget(k("h"), "zz")).toBeNull();
    expect(await redis().hgetall(k("h"))).toEqual(["a", "1", "b", "x"]);
    expect(await redis().hgetall(k("none"))).toEqual([]);
    expect(toRecord(await redis().hgetall(k("none")))).toBeNull();
    expect(await redis().hmget(k("h"), "a", "zz")).toEqual(["1", null]);
    expect(await redis().hexists(k("h"), "a")).toBe(1);
    expect(await redis().hexists(k("h"), "zz")).toBe(0);
    expect((await redis().hkeys(k("h"))).sort()).toEqual(["a", "b"]);
    expect(await redis().hlen(k("h"))).toBe(2);
    expect(await redis().hdel(k("h"), "a", "zz")).toBe(1);
    expect(await redis().hlen(k("none"))).toBe(0);
  });

  it("scans a hash in chunks (HSCAN: a cursor and a flat array), also in a transaction beside HMGET", async () => {
    // values past 64 bytes: a hash table, which HSCAN walks in chunks (a small listpack comes whole)
    const value = (i: number) => `v${i}`.padEnd(80, ".");
    await redis().hset(
      k("scan"),
      Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`f${i}`, value(i)])),
    );
    const seen = new Map<string, string>();
    let cursor: string | number = "0";
    let rounds = 0;
    do {
      const [next, flat] = await redis().hscan(k("scan"), cursor, { count: 50 });
      for (let i = 0; i + 1 < flat.length; i += 2) seen.set(String(flat[i]), String(flat[i + 1]));
      cursor = next;
      rounds++;
    } while (String(cursor) !== "0");
    expect(seen.size).toBe(300);
    expect(seen.get("f7")).toBe(value(7));
    expect(rounds).toBeGreaterThan(1);
    const [scan, values] = await redis()
      .multi()
      .hscan(k("none"), "0", { count: 10 })
      .hmget(k("scan"), "f1", "zz")
      .exec<[[string | number, unknown[]], unknown]>();
    expect([String(scan[0]), scan[1]]).toEqual(["0", []]);
    expect(values).toEqual([value(1), null]);
  });

  it("answers sets, sorted-set ranges and removal, and TIME", async () => {
    expect(await redis().sadd(k("set"), "x", "y")).toBe(2);
    expect((await redis().smembers(k("set"))).sort()).toEqual(["x", "y"]);
    await admin.zadd(k("z"), 1, "m1", 2, "m2", 3, "m3");
    expect(await redis().zrange(k("z"), 0, -1)).toEqual(["m1", "m2", "m3"]);
    expect(await redis().zrange(k("z"), 0, 2, { byScore: true, offset: 0, count: 1 })).toEqual(["m1"]);
    expect(await redis().zrange(k("z"), 2, 3, { byScore: true })).toEqual(["m2", "m3"]);
    expect(await redis().zrem(k("z"), "m1", "none")).toBe(1);
    const [seconds, micros] = await redis().time();
    expect(seconds).toMatch(/^\d{10}$/);
    expect(micros).toMatch(/^\d+$/);
    expect(Math.abs(Number(seconds) * 1000 - Date.now())).toBeLessThan(5_000);
  });

  it("runs pipelines and transactions, answering the array of replies", async () => {
    await redis().hset(k("meta"), { stock: "7" });
    const replies = await redis()
      .pipeline()
      .set(k("p"), "1")
      .incr(k("p"))
      .get(k("p"))
      .hgetall(k("meta"))
      .hget(k("meta"), "stock")
      .hexists(k("meta"), "nope")
      .hlen(k("meta"))
      .sadd(k("ps"), "a")
      .hdel(k("meta"), "nope")
      .zrem(k("z"), "none")
      .del(k("ps"))
      .exec();
    expect(replies).toEqual(["OK", 2, "2", ["stock", "7"], "7", 0, 1, 1, 0, 0, 1]);
    const atomic = await redis()
      .multi()
      .hget(k("meta"), "stock")
      .get(k("p"))
      .hlen(k("meta"))
      .hgetall(k("x"))
      .exec();
    expect(atomic).toEqual(["7", "2", 1, []]);
  });

  it("rejects a pipeline with a failed command, after running the others; and an empty one", async () => {
    await redis().set(k("text"), "abc");
    await expect(
      redis().pipeline().set(k("after"), "1").incr(k("text")).incr(k("after")).exec(),
    ).rejects.toThrow(/not an integer/);
    expect(await redis().get(k("after"))).toBe("2");
    await expect(redis().multi().incr(k("text")).exec()).rejects.toThrow(/not an integer/);
    await expect(redis().pipeline().exec()).rejects.toThrow(/empty/);
  });

  it("runs scripts, answering Lua integers as numbers, strings as strings, false as null", async () => {
    const script = testScript(
      "redis.call('INCRBY', KEYS[1], ARGV[1]); return {1, ARGV[2], tonumber(redis.call('GET', KEYS[1])), false}",
    );
    expect(await runScript(redis(), script, [k("lua")], ["3", "id-1"])).toEqual([1, "id-1", 3, null]);
    expect(await runScript(redis(), script, [k("lua")], ["2", "id-2"])).toEqual([1, "id-2", 5, null]);
  });

  it("falls back from EVALSHA to EVAL after SCRIPT FLUSH", async () => {
    const lua = `return redis.call('INCRBY', KEYS[1], ARGV[1]) -- ${name}`;
    const script = testScript(lua);
    expect(await runScript(redis(), script, [k("flush")], ["1"])).toBe(1);
    await admin.script("FLUSH");
    const evalsBefore = await evalCalls();
    expect(await runScript(redis(), script, [k("flush")], ["2"])).toBe(3);
    expect((await evalCalls()).eval).toBe(evalsBefore.eval + 1);
    expect(await runScript(redis(), script, [k("flush")], ["3"])).toBe(6);
    const after = await evalCalls();
    expect(after.eval).toBe(evalsBefore.eval + 1);
    expect(after.evalsha).toBe(evalsBefore.evalsha + 2);
  });
});

/** A script with its SHA-1 computed here (the engine's scripts pin theirs: src/stock/script.ts). */
function testScript(source: string) {
  return defineScript("test", source, createHash("sha1").update(source).digest("hex"));
}

/** EVAL and EVALSHA calls so far, from INFO commandstats. */
async function evalCalls(): Promise<{ eval: number; evalsha: number }> {
  const info = await admin.info("commandstats");
  const calls = (cmd: string) => Number(new RegExp(`cmdstat_${cmd}:calls=(\\d+)`).exec(info)?.[1] ?? 0);
  return { eval: calls("eval"), evalsha: calls("evalsha") };
}

describe("RedisStore over tcp while redis-server is down", () => {
  it("rejects calls fast instead of queueing them, and recovers after a restart", async () => {
    await tcp.set("down:k", "v");
    await server.kill();
    for (const call of [
      () => tcp.get("down:k"),
      () => tcp.pipeline().get("down:k").exec(),
      () => runScript(tcp, testScript("return 1"), [], []),
    ]) {
      const started = Date.now();
      await expect(call()).rejects.toThrow();
      expect(Date.now() - started).toBeLessThan(1_500);
    }
    await expect(stores.upstash?.get("down:k")).rejects.toThrow();
    await server.restart({ empty: true });
    await expect.poll(() => tcp.get("down:k").catch(() => "down"), { timeout: 5_000 }).toBeNull();
  }, 20_000);
});

/**
 * The local Upstash REST server driven by the real `@upstash/redis` client, in front of a real
 * redis-server: reply shapes, pipelines, transactions, scripts with the NOSCRIPT fallback, errors, auth,
 * pub/sub over Server-Sent Events, what it refuses, and a Redis outage answered quickly.
 */
import { errors, Redis } from "@upstash/redis";
import { Redis as Direct } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RedisProcess, startRedis } from "../../../local/redis-process";
import { startUpstashRedisServer, type UpstashRedisServer } from "../../../local/upstash-redis-server";

const token = "test-upstash-token";
let redisServer: RedisProcess;
let rest: UpstashRedisServer;
let redis: Redis;
let direct: Direct;

/** One raw REST call (what a client other than `@upstash/redis` may send). */
function call(path: string, init: RequestInit = {}) {
  return fetch(`${rest.url}${path}`, {
    method: "POST",
    ...init,
    headers: { authorization: `Bearer ${token}`, ...init.headers },
  });
}

beforeAll(async () => {
  redisServer = await startRedis({ port: 0 });
  rest = await startUpstashRedisServer({ port: 0, redisUrl: redisServer.url, token });
  redis = new Redis({ url: rest.url, token, enableTelemetry: false });
  direct = new Direct(redisServer.url, { maxRetriesPerRequest: 1 });
  direct.on("error", () => undefined);
});

afterAll(async () => {
  direct?.disconnect();
  await rest?.close();
  await redisServer?.stop();
});

describe("local Upstash REST server", () => {
  it("round-trips strings, numbers, unicode and nil", async () => {
    expect(await redis.set("str:a", "hello")).toBe("OK");
    expect(await redis.get("str:a")).toBe("hello");
    expect(await redis.set("str:uni", "grüße €😀")).toBe("OK");
    expect(await redis.get("str:uni")).toBe("grüße €😀");
    expect(await redis.set("str:ok", "OK")).toBe("OK");
    expect(await redis.get("str:ok")).toBe("OK");
    expect(await redis.incrby("str:n", 5)).toBe(5);
    expect(await redis.get("str:missing")).toBeNull();
    expect(await redis.set("str:nx", "1", { nx: true })).toBe("OK");
    expect(await redis.set("str:nx", "2", { nx: true })).toBeNull();
    expect(await redis.mget("str:a", "str:missing")).toEqual(["hello", null]);
    expect(await redis.set("str:json", { a: 1 })).toBe("OK");
    expect(await redis.get("str:json")).toEqual({ a: 1 });
    expect(await redis.del("str:a", "str:n")).toBe(2);
  });

  it("answers hashes as flat arrays the client turns into objects", async () => {
    await redis.hset("hash:1", { name: "ann", count: 3 });
    expect(await redis.hgetall("hash:1")).toEqual({ name: "ann", count: 3 });
    expect(await redis.hgetall("hash:none")).toBeNull();
    expect(await redis.hincrby("hash:1", "count", 2)).toBe(5);
    expect(await redis.hmget("hash:1", "name", "nope")).toEqual({ name: "ann", nope: null });
  });

  it("keeps sorted-set scores in RESP2 order", async () => {
    await redis.zadd("zset:1", { score: 2, member: "b" }, { score: 1, member: "a" });
    expect(await redis.zrange("zset:1", 0, -1, { withScores: true })).toEqual(["a", 1, "b", 2]);
    expect(await redis.zscore("zset:1", "b")).toBe(2);
    expect(await redis.zpopmin("zset:1")).toEqual(["a", 1]);
  });

  it("runs pipelines, keeping per-command errors", async () => {
    await redis.set("pipe:s", "text");
    const results = await redis.pipeline().set("pipe:a", 1).incr("pipe:a").get("pipe:a").exec();
    expect(results).toEqual(["OK", 2, 2]);
    const kept = await redis.pipeline().incr("pipe:s").incr("pipe:a").exec({ keepErrors: true });
    expect(kept[0]?.error).toMatch(/not an integer/);
    expect(kept[1]).toEqual({ error: undefined, result: 3 });
    await expect(redis.pipeline().incr("pipe:s").exec()).rejects.toThrow(errors.UpstashError);
  });

  it("runs multi-exec atomically on its own connection", async () => {
    const results = await redis.multi().set("tx:a", 10).incrby("tx:a", 5).get("tx:a").exec();
    expect(results).toEqual(["OK", 15, 15]);
    const concurrent = await Promise.all(
      Array.from({ length: 20 }, () => redis.multi().incr("tx:n").incr("tx:n").exec()),
    );
    for (const [first, second] of concurrent) expect(second).toBe((first as number) + 1);
    await expect(redis.multi().set("tx:s", "x").incr("tx:s").exec()).rejects.toThrow(/not an integer/);
    expect(await redis.get("tx:s")).toBe("x");
  });

  it("falls back from EVALSHA to EVAL after SCRIPT FLUSH", async () => {
    const script = redis.createScript<number>("return redis.call('INCRBY', KEYS[1], ARGV[1])");
    expect(await script.exec(["lua:n"], ["2"])).toBe(2);
    const sha = script.sha1;
    expect(await redis.scriptExists(sha)).toEqual([1]);
    expect(await redis.scriptFlush()).toBe("OK");
    expect(await redis.scriptExists(sha)).toEqual([0]);
    await expect(redis.evalsha(sha, ["lua:n"], ["1"])).rejects.toThrow(/NOSCRIPT/);
    expect(await script.exec(["lua:n"], ["3"])).toBe(5);
    expect(await redis.scriptExists(sha)).toEqual([1]);
    const table = redis.createScript<unknown[]>("return {1, 'two', {3}, redis.status_reply('OK')}");
    expect(await table.exec([], [])).toEqual([1, "two", [3], "OK"]);
  });

  it("surfaces Redis errors as UpstashError", async () => {
    await redis.set("err:s", "text");
    const failure = await redis.incr("err:s").catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(errors.UpstashError);
    expect(String((failure as Error).message)).toMatch(/ERR value is not an integer/);
  });

  it("refuses a wrong token with 401 and commands that would take over a connection", async () => {
    const wrong = new Redis({ url: rest.url, token: "wrong", enableTelemetry: false });
    await expect(wrong.get("x")).rejects.toThrow(errors.UpstashError);
    const res = await fetch(rest.url, {
      method: "POST",
      headers: { authorization: "Bearer nope" },
      body: '["PING"]',
    });
    expect(res.status).toBe(401);
    for (const authorization of ["Basic eDp5", "Bearer", `bearer ${token}x`]) {
      const malformed = await fetch(rest.url, {
        method: "POST",
        headers: { authorization },
        body: '["PING"]',
      });
      expect(malformed.status).toBe(401);
    }
    const sub = await fetch(rest.url, {
      method: "POST",
      headers: { authorization: `Bearer ${token}` },
      body: '["SUBSCRIBE","chan"]',
    });
    expect(sub.status).toBe(400);
    expect(sub.headers.get("upstash-sync-token")).toBeTruthy();
    expect(await redis.ping()).toBe("PONG");
  });

  it("answers plain strings without Upstash-Encoding, base64 with it", async () => {
    await direct.set("plain:k", "plain €");
    expect(await (await call("", { body: '["GET","plain:k"]' })).json()).toEqual({ result: "plain €" });
    const encoded = await call("", {
      headers: { "upstash-encoding": "base64" },
      body: '["MGET","plain:k","plain:none"]',
    });
    expect(await encoded.json()).toEqual({ result: [Buffer.from("plain €").toString("base64"), null] });
  });

  it("waits for a slow command's reply; only the replyTimeoutMs fault answers 503 while it commits", async () => {
    await direct.call("CLIENT", "PAUSE", "2600", "WRITE");
    expect(await redis.set("slow:waited", "v")).toBe("OK");
    rest.setFaults({ replyTimeoutMs: 300 });
    try {
      await direct.call("CLIENT", "PAUSE", "1500", "WRITE");
      const res = await call("", { body: '["SET","slow:late","v"]' });
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({ error: expect.stringMatching(/fault/) });
      await expect.poll(() => direct.get("slow:late"), { timeout: 5_000 }).toBe("v");
    } finally {
      rest.setFaults({ replyTimeoutMs: null });
    }
  }, 15_000);

  it("serves blocking commands on connections of their own, so other commands keep flowing", async () => {
    const abort = new AbortController();
    const blocked = Array.from({ length: 6 }, () =>
      call("", { body: '["XREAD","BLOCK","0","STREAMS","block:s","$"]', signal: abort.signal }).catch(
        () => null,
      ),
    );
    await expect
      .poll(async () => Number(/blocked_clients:(\d+)/.exec(await direct.info("clients"))?.[1]))
      .toBe(6);
    const pings = await Promise.all(Array.from({ length: 20 }, () => redis.ping()));
    expect(pings.every((p) => p === "PONG")).toBe(true);
    const popped = call("", { body: '["BLPOP","block:list","5"]' });
    await direct.lpush("block:list", "x");
    expect(await (await popped).json()).toEqual({ result: ["block:list", "x"] });
    abort.abort();
    await Promise.all(blocked);
    await expect
      .poll(async () => Number(/blocked_clients:(\d+)/.exec(await direct.info("clients"))?.[1]))
      .toBe(0);
  }, 15_000);

  it("answers a pipeline per command: a refused command gets its error, the others run", async () => {
    const res = await call("/pipeline", {
      body: JSON.stringify([
        ["SET", "pipe:r", "1"],
        ["SUBSCRIBE", "chan"],
        ["GET", "pipe:r"],
      ]),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual([
      { result: "OK" },
      { error: expect.stringMatching(/SUBSCRIBE/) },
      { result: "1" },
    ]);
  });

  it("keeps every digit of integers above 2^53", async () => {
    await direct.set("big:n", "9007199254740994");
    const res = await call("", { body: '["INCR","big:n"]' });
    expect(await res.text()).toBe('{"result":9007199254740995}');
    const script = await call("", {
      body: '["EVAL","return {redis.call(\'INCR\', KEYS[1]), 1}","1","big:n"]',
    });
    expect(await script.text()).toBe('{"result":[9007199254740996,1]}');
  });

  it("allows HEAD, GET, POST and PUT only, and refuses what it does not implement with 501", async () => {
    for (const method of ["DELETE", "PATCH"]) {
      const res = await call("/del/method:k", { method });
      expect(res.status).toBe(405);
    }
    for (const [method, path] of [
      ["POST", "/set/method:k/v?EX=100"],
      ["GET", "/get/method:k"],
      ["PUT", "/set/method:k"],
      ["POST", "/monitor"],
    ] as const) {
      const res = await call(path, { method });
      expect([res.status, await res.json()]).toEqual([
        501,
        { error: expect.stringMatching(/not implemented/) },
      ]);
    }
    expect(await direct.exists("method:k")).toBe(0);
  });

  it("streams SUBSCRIBE and PSUBSCRIBE as Server-Sent Events; a disconnect ends the subscription", async () => {
    const numsub = async (channel: string) =>
      ((await direct.call("PUBSUB", "NUMSUB", channel)) as [string, number])[1];
    const numpat = () => direct.call("PUBSUB", "NUMPAT");
    const subscriber = redis.subscribe<{ n: number }>("sub:orders");
    const counts: number[] = [];
    const messages: unknown[] = [];
    subscriber.on("subscribe", (count) => counts.push(count));
    subscriber.on("message", (m) => messages.push(m));
    const patterns = redis.psubscribe<{ state: string }>("sub:sale:*");
    const pmessages: unknown[] = [];
    patterns.on("pmessage", (m) => pmessages.push(m));
    await expect.poll(() => numsub("sub:orders")).toBe(1);
    await expect.poll(numpat).toBe(1);
    await expect.poll(() => counts).toEqual([1]);

    expect(await redis.publish("sub:orders", { n: 1 })).toBe(1);
    expect(await redis.publish("sub:sale:7", { state: "sold-out" })).toBe(1);
    await expect.poll(() => messages).toEqual([{ channel: "sub:orders", message: { n: 1 } }]);
    await expect
      .poll(() => pmessages)
      .toEqual([{ pattern: "sub:sale:*", channel: "sub:sale:7", message: { state: "sold-out" } }]);

    await subscriber.unsubscribe();
    await patterns.unsubscribe();
    await expect.poll(() => numsub("sub:orders"), { timeout: 5_000 }).toBe(0);
    await expect.poll(numpat, { timeout: 5_000 }).toBe(0);
  }, 15_000);

  it("writes the event lines Upstash writes", async () => {
    const abort = new AbortController();
    const res = await call("/subscribe/sub:raw", { body: "[]", signal: abort.signal });
    expect([res.status, res.headers.get("content-type")]).toEqual([200, "text/event-stream"]);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = "";
    const readUntil = async (end: string) => {
      while (!text.endsWith(end)) {
        const { done, value } = await reader.read();
        if (done) throw new Error(`stream ended after ${JSON.stringify(text)}`);
        text += decoder.decode(value, { stream: true });
      }
    };
    await readUntil("\n\n");
    await direct.publish("sub:raw", "a,b");
    await readUntil("a,b\n\n");
    expect(text).toBe("data: subscribe,sub:raw,1\n\ndata: message,sub:raw,a,b\n\n");
    abort.abort();
    await expect
      .poll(async () => ((await direct.call("PUBSUB", "NUMSUB", "sub:raw")) as unknown[])[1])
      .toBe(0);
  });

  it("answers 503 quickly while Redis is down, and recovers after a restart", async () => {
    await redis.set("down:k", "v");
    await redisServer.kill();
    const started = Date.now();
    await expect(redis.get("down:k")).rejects.toThrow(/unavailable/i);
    await expect(redis.multi().get("down:k").exec()).rejects.toThrow(errors.UpstashError);
    expect(Date.now() - started).toBeLessThan(4_500);
    await redisServer.restart({ empty: true });
    await expect.poll(() => redis.ping().catch(() => "down"), { timeout: 3_000 }).toBe("PONG");
    expect(await redis.get("down:k")).toBeNull();
  }, 15_000);
});

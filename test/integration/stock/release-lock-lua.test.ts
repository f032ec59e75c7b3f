import type { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { ScriptCode as C } from "../../../src/stock/codes";
import { lua } from "../../support/lua";
import { redisServerForFile } from "../../support/redis-per-file";

let redis: Redis;
redisServerForFile((connection) => {
  redis = connection;
});

const release = (key: string, token: string) => redis.eval(lua("release-lock"), 1, key, token);

describe("release-lock.lua against a real redis-server", () => {
  it("releases the caller's own lock", async () => {
    await redis.set("lock:a", "t1", "PX", 30_000, "NX");
    expect(await release("lock:a", "t1")).toBe(C.OK);
    expect(await redis.exists("lock:a")).toBe(0);
  });

  it("leaves a lock that expired and was taken by another holder", async () => {
    await redis.set("lock:b", "t1", "PX", 50, "NX");
    await new Promise((r) => setTimeout(r, 120));
    expect(await redis.set("lock:b", "t2", "PX", 30_000, "NX")).toBe("OK");
    expect(await release("lock:b", "t1")).toBe(C.NOT_HELD);
    expect(await redis.get("lock:b")).toBe("t2");
  });

  it("does nothing when there is no lock", async () => {
    expect(await release("lock:none", "t1")).toBe(C.NOT_HELD);
  });
});

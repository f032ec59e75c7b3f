/**
 * The Upstash REST client (the Workers and Deno Deploy driver) and the TCP adapter both satisfy
 * RedisStore: checked by `tsc`, and by the assignments compiling here.
 */
import { Redis } from "@upstash/redis/cloudflare";
import { describe, expect, it } from "vitest";
import type { RedisStore } from "../../src/stores/redis-store";
import { connectRedisTcp } from "../../src/stores/redis-tcp";

describe("RedisStore", () => {
  it("is satisfied by the Upstash client and the TCP adapter", () => {
    const upstash: RedisStore = new Redis({
      url: "http://127.0.0.1:1",
      token: "t",
      automaticDeserialization: false,
    });
    const tcp: RedisStore = connectRedisTcp("redis://127.0.0.1:1", { lazy: true });
    for (const store of [upstash, tcp]) {
      expect(typeof store.evalsha).toBe("function");
      expect(typeof store.eval).toBe("function");
    }
  });
});

import { describe, expect, it } from "vitest";
import { ConfigError, readConfig } from "../../src/env";
import { settingsWith } from "../support/settings-env";

const env = (vars: Record<string, string>) => settingsWith({ REDIS_URL: undefined, ...vars });

describe("REDIS_REPLICA_ACKS and its timeout", () => {
  it("default to no acknowledgement, and take a count and a timeout with a TCP Redis", () => {
    expect(readConfig(env({ REDIS_URL: "redis://127.0.0.1:6379" }))).toMatchObject({
      REDIS_REPLICA_ACKS: 0,
      REDIS_REPLICA_ACK_TIMEOUT_MS: 250,
    });
    const cluster = env({
      REDIS_CLUSTER_NODES: "redis://10.0.0.1:6379,redis://10.0.0.2:6379",
      REDIS_REPLICA_ACKS: "1",
      REDIS_REPLICA_ACK_TIMEOUT_MS: "500",
    });
    expect(readConfig(cluster)).toMatchObject({ REDIS_REPLICA_ACKS: 1, REDIS_REPLICA_ACK_TIMEOUT_MS: 500 });
  });

  it("refuse Upstash over REST, a timeout past 1 s, and what is not a count, naming the setting", () => {
    const upstash = env({
      UPSTASH_REDIS_REST_URL: "https://example.upstash.io",
      UPSTASH_REDIS_REST_TOKEN: "t",
      REDIS_REPLICA_ACKS: "1",
    });
    expect(() => readConfig(upstash)).toThrow(ConfigError);
    expect(() => readConfig(upstash)).toThrow(/REDIS_REPLICA_ACKS/);
    for (const [name, value] of [
      ["REDIS_REPLICA_ACK_TIMEOUT_MS", "3000"],
      ["REDIS_REPLICA_ACK_TIMEOUT_MS", "0"],
      ["REDIS_REPLICA_ACKS", "-1"],
      ["REDIS_REPLICA_ACKS", "one"],
    ] as const) {
      const vars = env({ REDIS_URL: "redis://127.0.0.1:6379", [name]: value });
      expect(() => readConfig(vars), `${name}=${value}`).toThrow(new RegExp(name));
    }
  });
});

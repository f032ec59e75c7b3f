import { describe, expect, it } from "vitest";
import { ConfigError, readConfig } from "../../src/env";
import { settingsWith } from "../support/settings-env";

const env = (vars: Record<string, string | undefined>) => settingsWith({ REDIS_URL: undefined, ...vars });
const URLS = "https://a.upstash.io, https://b.upstash.io,https://c.upstash.io";

describe("UPSTASH_REDIS_REST_URLS and _TOKENS", () => {
  it("take one token per URL, spaces trimmed, beside the single database's pair or alone", () => {
    expect(
      readConfig(env({ UPSTASH_REDIS_REST_URLS: URLS, UPSTASH_REDIS_REST_TOKENS: "a, b,c" })),
    ).toMatchObject({
      UPSTASH_REDIS_REST_URLS: URLS,
    });
    const both = env({
      UPSTASH_REDIS_REST_URL: "https://a.upstash.io",
      UPSTASH_REDIS_REST_TOKEN: "a",
      UPSTASH_REDIS_REST_URLS: URLS,
      UPSTASH_REDIS_REST_TOKENS: "a,b,c",
    });
    expect(() => readConfig(both)).not.toThrow();
  });

  it("refuse a missing, empty or extra token, a URL that is not one, and a TCP Redis beside them, naming the setting", () => {
    const pair = { UPSTASH_REDIS_REST_URL: "https://a.upstash.io", UPSTASH_REDIS_REST_TOKEN: "a" };
    for (const [vars, named] of [
      [{ ...pair, UPSTASH_REDIS_REST_URLS: "https://a.upstash.io" }, /UPSTASH_REDIS_REST_TOKENS/],
      [{ UPSTASH_REDIS_REST_URLS: URLS, UPSTASH_REDIS_REST_TOKENS: "a,,c" }, /UPSTASH_REDIS_REST_TOKENS/],
      [{ UPSTASH_REDIS_REST_URLS: URLS, UPSTASH_REDIS_REST_TOKENS: "a,b" }, /UPSTASH_REDIS_REST_TOKENS/],
      [{ UPSTASH_REDIS_REST_URLS: URLS, UPSTASH_REDIS_REST_TOKENS: "a,b,c," }, /UPSTASH_REDIS_REST_TOKENS/],
      [
        { UPSTASH_REDIS_REST_URLS: "https://a.upstash.io,", UPSTASH_REDIS_REST_TOKENS: "a,b" },
        /UPSTASH_REDIS_REST_URLS/,
      ],
      [
        {
          UPSTASH_REDIS_REST_URLS: URLS,
          UPSTASH_REDIS_REST_TOKENS: "a,b,c",
          REDIS_URL: "redis://127.0.0.1:6379",
        },
        /UPSTASH_REDIS_REST_URLS/,
      ],
    ] as const) {
      expect(() => readConfig(env(vars)), JSON.stringify(vars)).toThrow(ConfigError);
      expect(() => readConfig(env(vars)), JSON.stringify(vars)).toThrow(named);
    }
  });
});

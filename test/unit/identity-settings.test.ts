import { describe, expect, it } from "vitest";
import { ConfigError, type Env, readConfig } from "../../src/env";
import { settingsWith } from "../support/settings-env";

const base = (): Env => settingsWith();

describe("identity settings (contract: Identity)", () => {
  it("refuses to start with JWT_JWKS_URL but without JWT_ISSUER or JWT_AUDIENCE, naming them", () => {
    const url = "https://idp.example/.well-known/jwks.json";
    for (const missing of [{}, { JWT_ISSUER: "https://idp.example/" }, { JWT_AUDIENCE: "shop" }]) {
      const env = { ...base(), JWT_JWKS_URL: url, ...missing };
      expect(() => readConfig(env)).toThrow(ConfigError);
      expect(() => readConfig(env)).toThrow(/JWT_ISSUER and JWT_AUDIENCE/);
    }
    const config = readConfig({
      ...base(),
      JWT_JWKS_URL: url,
      JWT_ISSUER: "https://idp.example/",
      JWT_AUDIENCE: "shop",
    });
    expect(config.JWT_JWKS_URL).toBe(url);
    expect(config.JWT_JWKS_CACHE_SECONDS).toBe(600);
    expect(config.JWT_JWKS_COOLDOWN_SECONDS).toBe(30);
  });

  it("keeps HS256 alone when no key set is named", () => {
    expect(readConfig(base()).JWT_JWKS_URL).toBeUndefined();
  });
});

import { describe, expect, it } from "vitest";
import { exampleSecrets } from "../../local/worker-runtime";
import { ConfigError, readConfig } from "../../src/env";
import { operatorsOf } from "../../src/middleware/admin-auth";
import { settingsWith } from "../support/settings-env";

const env = settingsWith;

const ALICE = "alice-token-0123456789";
const GRAFANA = "grafana-token-0123456789";

describe("OPERATOR_TOKENS: named operators beside ADMIN_TOKEN", () => {
  it("reads name:token:role entries; ADMIN_TOKEN stays the operator admin", () => {
    const config = readConfig(env({ OPERATOR_TOKENS: ` alice:${ALICE}:admin, grafana:${GRAFANA}:read ` }));
    expect(operatorsOf(config)).toEqual([
      { name: "admin", token: config.ADMIN_TOKEN, role: "admin" },
      { name: "alice", token: ALICE, role: "admin" },
      { name: "grafana", token: GRAFANA, role: "read" },
    ]);
    expect(operatorsOf(readConfig(env({}))).map((o) => o.name)).toEqual(["admin"]);
  });

  it("refuses a malformed or repeated entry, naming the setting and never a token", () => {
    for (const bad of [
      `Alice:${ALICE}:admin`,
      `alice:short:admin`,
      `alice:${ALICE}:owner`,
      `alice:${ALICE}`,
      `${"a".repeat(33)}:${ALICE}:read`,
      `alice:${ALICE}:admin,alice:${GRAFANA}:read`,
      `alice:${ALICE}:admin,grafana:${ALICE}:read`,
      `alice:${ALICE}:admin,`,
      `admin:${ALICE}:read`,
      `reader:${exampleSecrets().ADMIN_TOKEN}:read`,
    ]) {
      const vars = env({ OPERATOR_TOKENS: bad });
      expect(() => readConfig(vars), bad).toThrow(ConfigError);
      expect(() => readConfig(vars), bad).toThrow(/OPERATOR_TOKENS/);
      try {
        readConfig(vars);
      } catch (error) {
        expect(String(error)).not.toContain(ALICE);
      }
    }
  });

  it("takes OPERATOR_JWT_AUDIENCE only with the shop's key set, and never the shoppers' audience", () => {
    const keySet = {
      JWT_JWKS_URL: "https://idp.example/.well-known/jwks.json",
      JWT_ISSUER: "https://idp.example/",
      JWT_AUDIENCE: "flash-sale",
    };
    const config = readConfig(env({ ...keySet, OPERATOR_JWT_AUDIENCE: "flash-sale-operators" }));
    expect([config.OPERATOR_JWT_AUDIENCE, config.OPERATOR_ROLE_CLAIM]).toEqual([
      "flash-sale-operators",
      "flash_sale_role",
    ]);
    for (const bad of [
      { OPERATOR_JWT_AUDIENCE: "flash-sale-operators" },
      { ...keySet, OPERATOR_JWT_AUDIENCE: "flash-sale" },
      { ...keySet, OPERATOR_JWT_AUDIENCE: "flash-sale-operators", OPERATOR_ROLE_CLAIM: "a claim" },
    ]) {
      expect(() => readConfig(env(bad)), JSON.stringify(bad)).toThrow(ConfigError);
    }
  });
});

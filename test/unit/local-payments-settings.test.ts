import { describe, expect, it } from "vitest";
import { ConfigError, readConfig } from "../../src/env";
import { settingsWith } from "../support/settings-env";

const env = settingsWith;

describe("PAYMENT_PROVIDER=local (press-to-pay) is for a loopback engine only", () => {
  it("refuses to start when PUBLIC_URL is not a loopback address, naming both settings", () => {
    for (const url of [
      "https://shop.example",
      "http://10.0.0.5:8787",
      "http://192.168.1.20:8787",
      "http://0.0.0.0:8787",
      "http://[::]:8787",
      "http://localhost.shop.example",
      "http://127.0.0.1.nip.io",
    ]) {
      const vars = env({ PAYMENT_PROVIDER: "local", PUBLIC_URL: url });
      expect(() => readConfig(vars), url).toThrow(ConfigError);
      expect(() => readConfig(vars), url).toThrow(/PUBLIC_URL.*PAYMENT_PROVIDER=local/);
    }
  });

  it("starts with a loopback PUBLIC_URL: localhost, 127.0.0.0/8 in any spelling, ::1", () => {
    for (const url of [
      "http://localhost:8787",
      "http://LOCALHOST.:8787",
      "http://127.0.0.1:8787",
      "https://127.0.0.1:4443",
      "http://127.1:8787",
      "http://127.255.0.9",
      "http://[::1]:8787",
    ])
      expect([url, readConfig(env({ PAYMENT_PROVIDER: "local", PUBLIC_URL: url })).PAYMENT_PROVIDER]).toEqual(
        [url, "local"],
      );
  });

  it("leaves the other providers' PUBLIC_URL alone", () => {
    const manual = readConfig(env({ PAYMENT_PROVIDER: "manual", PUBLIC_URL: "https://shop.example" }));
    expect(manual.PUBLIC_URL).toBe("https://shop.example");
    expect(readConfig(env({ PUBLIC_URL: "https://shop.example" })).PAYMENT_PROVIDER).toBe("stripe");
  });
});

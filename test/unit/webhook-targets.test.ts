import { describe, expect, it } from "vitest";
import { addressRefusal, deliveryRefusal, targetRefusal } from "../../src/webhooks/endpoint-target";

describe("webhook targets: what is off the public internet", () => {
  it("refuses inward addresses in every spelling a URL parser accepts", () => {
    const inward = [
      "http://127.0.0.1/",
      "http://127.1/",
      "http://2130706433/",
      "http://0x7f.1/",
      "http://0177.0.0.1/",
      "http://127.0.0.1./",
      "http://[::1]/",
      "http://[::ffff:127.0.0.1]/",
      "http://[::ffff:a9fe:a9fe]/",
      "http://[64:ff9b::a00:1]/",
      "http://[2002:c0a8:101::1]/",
      "http://localhost/",
      "http://LocalHost./",
      "http://a.b.localhost/",
      "http://0.0.0.0/",
      "http://0/",
      "http://10.255.255.255/",
      "http://172.16.0.0/",
      "http://192.168.255.1/",
      "http://169.254.169.254/",
      "http://100.127.0.1/",
      "http://224.0.0.1/",
      "http://255.255.255.255/",
      "http://[::]/",
      "http://[::2]/",
      "http://[fc00::]/",
      "http://[fdff::1]/",
      "http://[fe80::1]/",
      "http://[ff02::1]/",
    ];
    for (const url of inward) expect([url, targetRefusal(url)]).toEqual([url, expect.any(String)]);
    expect(targetRefusal("http://0x7f.1/")).toBe("127.0.0.1 is a loopback address");
    expect(targetRefusal("http://[::ffff:10.0.0.1]/")).toBe(
      "[::ffff:a00:1] is the IPv4-mapped form of a private address",
    );
  });

  it("takes public addresses and names", () => {
    const outward = [
      "https://shop.example/hooks",
      "http://93.184.216.34/",
      "http://172.32.0.1/",
      "http://100.128.0.1/",
      "http://[2606:4700:4700::1111]/",
      "http://[64:ff9b::5db8:d822]/",
      "http://localhost.shop.example/",
    ];
    for (const url of outward) expect([url, targetRefusal(url)]).toEqual([url, null]);
    expect(addressRefusal("fe80::1%eth0")).toBe("a link-local address");
    expect(addressRefusal("not an address")).toBeNull();
  });

  it("at delivery, checks what a name resolves to where names resolve, unless private targets are allowed", async () => {
    const resolveHost = async (host: string) =>
      host === "inside.shop.example" ? ["93.184.216.34", "10.0.0.7"] : ["93.184.216.34"];
    const guard = { allowPrivate: false, resolveHost };
    expect(await deliveryRefusal("https://inside.shop.example/hook", guard)).toBe(
      "inside.shop.example resolves to 10.0.0.7, a private address",
    );
    expect(await deliveryRefusal("https://shop.example/hook", guard)).toBeNull();
    expect(await deliveryRefusal("http://127.0.0.1/hook", { ...guard, resolveHost: null })).toBe(
      "127.0.0.1 is a loopback address",
    );
    expect(
      await deliveryRefusal("https://inside.shop.example/hook", { ...guard, resolveHost: null }),
    ).toBeNull();
    const failing = async () => {
      throw new Error("ENOTFOUND");
    };
    expect(await deliveryRefusal("https://gone.example/", { ...guard, resolveHost: failing })).toBeNull();
    expect(await deliveryRefusal("http://127.0.0.1/hook", { allowPrivate: true, resolveHost })).toBeNull();
  });
});

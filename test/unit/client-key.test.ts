import { describe, expect, it } from "vitest";
import { formatIpv6, maskIpv6, parseIpv4, parseIpv6 } from "../../src/ip-address";
import { clientKey } from "../../src/limits/client-key";

describe("clientKey: who an address counts as", () => {
  it("takes every spelling of the addresses of one /64 as one client", () => {
    const spellings = [
      "2001:db8:1:2::1",
      "2001:DB8:1:2::2",
      "2001:0db8:0001:0002:0000:0000:0000:0003",
      "2001:db8:1:2:0:0:0:4",
      "2001:db8:1:2:ffff:ffff:ffff:ffff",
      "2001:db8:1:2::7%eth0",
      "[2001:db8:1:2::8]",
      "[2001:db8:1:2::9]:443",
      "2001:db8:1:2::10.0.0.1",
      "  2001:db8:1:2:a::b  ",
    ];
    expect(new Set(spellings.map((a) => clientKey(a, 64)))).toEqual(new Set(["2001:db8:1:2::/64"]));
    expect(clientKey("2001:db8:1:3::1", 64)).toBe("2001:db8:1:3::/64");
  });

  it("takes the prefix from the setting", () => {
    expect(clientKey("2001:db8:1:2:3:4:5:6", 48)).toBe("2001:db8:1::/48");
    expect(clientKey("2001:db8:1:2:3:4:5:6", 56)).toBe("2001:db8:1::/56");
    expect(clientKey("2001:db8:1:2ff:3:4:5:6", 56)).toBe("2001:db8:1:200::/56");
    expect(clientKey("2001:db8:1:2:3:4:5:6", 127)).toBe("2001:db8:1:2:3:4:5:6/127");
    expect(clientKey("2001:DB8::0:1", 128)).toBe("2001:db8::1");
    expect(clientKey("::1", 64)).toBe("::/64");
  });

  it("counts IPv4 by its address, IPv4-mapped IPv6 as its IPv4 address", () => {
    expect(clientKey("198.51.100.9", 64)).toBe("198.51.100.9");
    for (const mapped of [
      "::ffff:198.51.100.9",
      "::FFFF:c633:6409",
      "[::ffff:198.51.100.9]",
      "0:0:0:0:0:ffff:c633:6409",
    ])
      expect([mapped, clientKey(mapped, 64)]).toEqual([mapped, "198.51.100.9"]);
    expect(clientKey("198.51.100.10", 64)).not.toBe(clientKey("198.51.100.9", 64));
  });

  it("counts text that is no address as itself; nothing as nothing", () => {
    for (const garbage of [
      "unknown",
      "1.2.3",
      "1.2.3.4.5",
      "256.1.1.1",
      "01.2.3.4",
      "2001:db8::1::2",
      "1:2:3:4:5:6:7:8:9",
      "gggg::1",
      "1.2.3.4:80",
      "::1.2.3.4:5",
      ":1::",
    ])
      expect([garbage, clientKey(garbage, 64)]).toEqual([garbage, garbage]);
    expect(clientKey(undefined, 64)).toBeUndefined();
    expect(clientKey("   ", 64)).toBeUndefined();
  });
});

describe("IP address text", () => {
  it("reads IPv4 strictly and IPv6 as RFC 4291 writes it, and writes RFC 5952's form", () => {
    expect(parseIpv4("255.255.255.255")).toBe(2 ** 32 - 1);
    expect(parseIpv4("0x7f.0.0.1")).toBeNull();
    expect(parseIpv6("::")).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    expect(parseIpv6("1::")).toEqual([1, 0, 0, 0, 0, 0, 0, 0]);
    expect(parseIpv6("1:2:3:4:5:6:7::")).toEqual([1, 2, 3, 4, 5, 6, 7, 0]);
    expect(parseIpv6("1:2:3:4:5:6:7:8::")).toBeNull();
    expect(parseIpv6("1.2.3.4::")).toBeNull();
    expect(formatIpv6([0x2001, 0xdb8, 0, 0, 1, 0, 0, 1])).toBe("2001:db8::1:0:0:1");
    expect(formatIpv6([0x2001, 0xdb8, 0, 1, 1, 1, 1, 1])).toBe("2001:db8:0:1:1:1:1:1");
    expect(formatIpv6([0, 0, 0, 0, 0, 0, 0, 0])).toBe("::");
    expect(maskIpv6([0xffff, 0xffff, 0xffff, 0xffff, 0xffff, 0xffff, 0xffff, 0xffff], 60)).toEqual([
      0xffff, 0xffff, 0xffff, 0xfff0, 0, 0, 0, 0,
    ]);
  });
});

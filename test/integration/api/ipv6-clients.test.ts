import { describe, expect, it } from "vitest";
import { appForFile } from "../../support/app-per-file";
import { openEvents, type SseReader } from "../../support/sse";

/**
 * One IPv6 client holds a whole /64 (IPV6_PREFIX_BITS, default 64): every per-address count (the buy's
 * limit inside its script, the shopper routes' limits, the sale streams' share of their budget) takes
 * the addresses of one /64 as one client, however they are spelled; IPv4-mapped IPv6 counts as its
 * IPv4 address. Through the real servers, on every runtime (CF-Connecting-IP, trusted by the servers
 * in the tests as behind Cloudflare).
 */
const PER_IP = 4;
const STREAMS_PER_IP = 3;
const WINDOW_SECONDS = 600;

const app = appForFile({
  vars: {
    RATE_LIMIT_IP_PER_WINDOW: String(PER_IP),
    RATE_LIMIT_USER_PER_WINDOW: "1000",
    SHOPPER_LIMIT_IP_PER_WINDOW: String(PER_IP),
    SHOPPER_LIMIT_USER_PER_WINDOW: "1000",
    RATE_LIMIT_WINDOW_SECONDS: String(WINDOW_SECONDS),
    REALTIME_MAX_STREAMS_PER_IP: String(STREAMS_PER_IP),
  },
});

/** Twelve spellings of twelve addresses of the /64 `prefix` (four groups, e.g. `2001:db8:5:6`). */
function addressesOf(prefix: string): string[] {
  const long = prefix
    .split(":")
    .map((g) => g.padStart(4, "0"))
    .join(":");
  return [
    `${prefix}::1`,
    `${prefix.toUpperCase()}::2`,
    `${long}:0000:0000:0000:0003`,
    `${prefix}:0:0:0:4`,
    `${prefix}:ffff:ffff:ffff:ffff`,
    `${prefix}:1234:5678:9ABC:def0`,
    `${prefix}::7%eth0`,
    `[${prefix}::8]`,
    `${prefix}:a::9`,
    `${prefix}::10.0.0.1`,
    `${prefix}:dead:beef::b`,
    ` ${prefix}::c `,
  ];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const from = (ip: string) => ({ "CF-Connecting-IP": ip });

/** Waits for the next limits window when this one ends within 30 s, so a test counts in one window. */
async function earlyInWindow(): Promise<void> {
  const windowMs = WINDOW_SECONDS * 1000;
  const into = Date.now() % windowMs;
  if (into > windowMs - 30_000) await sleep(windowMs - into + 50);
}

const statuses = (rs: { status: number }[]) => rs.map((r) => r.status);
const count = (rs: { status: number }[], status: number) => rs.filter((r) => r.status === status).length;

describe("an IPv6 client is its /64", () => {
  it("buys from 12 addresses of one /64 are held to the per-address limit; another /64 is not", async () => {
    await earlyInWindow();
    const sale = await app.api.createSale({ stock: 40, perUserLimit: 1 });
    const answers = [];
    for (const [i, ip] of addressesOf("2001:db8:5:6").entries())
      answers.push(await app.api.buy(sale.productToken, `v6-buyer-${i}`, 1, from(ip)));
    expect(statuses(answers)).toEqual([...Array(PER_IP).fill(202), ...Array(12 - PER_IP).fill(429)]);
    for (const r of answers.filter((r) => r.status === 429))
      expect((r.body.error as { code: string }).code).toBe("RATE_LIMITED");
    expect((await app.api.buy(sale.productToken, "v6-elsewhere", 1, from("2001:db8:5:7::1"))).status).toBe(
      202,
    );
  });

  it("sale reads from 12 addresses of one /64 are held to the per-address limit", async () => {
    await earlyInWindow();
    const sale = await app.api.createSale({ stock: 5 });
    const read = (ip: string) => app.api.call("GET", `/api/sales/${sale.saleId}`, { headers: from(ip) });
    const answers = [];
    for (const ip of addressesOf("2001:db8:6:6")) answers.push(await read(ip));
    expect(statuses(answers)).toEqual([...Array(PER_IP).fill(200), ...Array(12 - PER_IP).fill(429)]);
    expect((await read("2001:db8:6:7::1")).status).toBe(200);
  });

  it("IPv4-mapped IPv6 counts as its IPv4 address", async () => {
    await earlyInWindow();
    const sale = await app.api.createSale({ stock: 5 });
    const read = (ip: string) => app.api.call("GET", `/api/sales/${sale.saleId}`, { headers: from(ip) });
    const answers = [];
    for (const ip of ["::ffff:198.51.100.9", "::FFFF:c633:6409", "[::ffff:198.51.100.9]", "198.51.100.9"])
      answers.push(await read(ip));
    answers.push(await read("198.51.100.9"));
    expect(statuses(answers)).toEqual([200, 200, 200, 200, 429]);
  });

  it("sale streams from 12 addresses of one /64 share one address's part of the budget", async () => {
    await earlyInWindow();
    const sale = await app.api.createSale({ stock: 5 });
    const url = `${app.worker.url}/api/sales/${sale.saleId}/events`;
    const streams: SseReader[] = [];
    try {
      for (const ip of addressesOf("2001:db8:7:6")) streams.push(await openEvents(url, from(ip)));
      expect(count(streams, 200)).toBe(STREAMS_PER_IP);
      expect(count(streams, 503) + count(streams, 429)).toBe(12 - STREAMS_PER_IP);
      const other = await openEvents(url, from("2001:db8:7:7::1"));
      streams.push(other);
      expect(other.status).toBe(200);
    } finally {
      for (const s of streams) s.close();
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newOrderId } from "../../../src/ids";
import type { ApiResponse } from "../../support/api";
import { type AppUnderTest, startApp } from "../../support/app";
import { statementCalls, statementsByQuery } from "../../support/db-inspect";
import { commandCounts, commandDelta, total } from "../../support/redis-inspect";
import { shopperToken } from "../../support/shopper";
import { openEvents, type SseReader } from "../../support/sse";

/**
 * Issue 21: one shopper cannot drive the database. Every shopper route is limited per user and per client
 * address (429 RATE_LIMITED with Retry-After), counted in memory and past half the limit in one Redis
 * counter; orders in a final status are answered from memory; sale reads carry ETag and Cache-Control.
 * Floods go through the real servers, and what reached the stores is counted at the stores themselves:
 * Postgres statements (pg_stat_statements) and Redis commands (INFO commandstats).
 */
const USER_LIMIT = 8;
const IP_LIMIT = 60;
const WINDOW_SECONDS = 10;

let app: AppUnderTest;

beforeAll(async () => {
  app = await startApp({
    statementStats: true,
    vars: {
      SHOPPER_LIMIT_USER_PER_WINDOW: String(USER_LIMIT),
      SHOPPER_LIMIT_IP_PER_WINDOW: String(IP_LIMIT),
      RATE_LIMIT_WINDOW_SECONDS: String(WINDOW_SECONDS),
      RATE_LIMIT_USER_PER_WINDOW: "1000",
      RATE_LIMIT_IP_PER_WINDOW: "100000",
      // no minute sweep on the server runtimes while the stores' counters are read
      CRON_SCHEDULE: "off",
      // a stream whose client left ends within a second (it learns at its next write)
      REALTIME_PING_MS: "1000",
      // the stream budgets (32 per address) would refuse the stream openings before the request limit
      REALTIME_MAX_STREAMS_PER_IP: "1000",
    },
  });
});
afterAll(async () => {
  await app?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let addresses = 0;
/** A client address of its own per call (CF-Connecting-IP), so each test counts alone. */
const address = () => ({ "CF-Connecting-IP": `198.51.100.${++addresses}` });

/** Waits, when the limits' window is about to turn, for the next one: a flood is then counted in one window. */
async function earlyInWindow(): Promise<void> {
  const windowMs = WINDOW_SECONDS * 1000;
  const into = Date.now() % windowMs;
  if (into > windowMs - 5000) await sleep(windowMs - into + 50);
}

/** A flood early in a window, its store cost, and how many windows it spanned (one, unless the box is slow). */
async function floodCost<T>(during: () => Promise<T>) {
  await earlyInWindow();
  const window = () => Math.floor(Date.now() / (WINDOW_SECONDS * 1000));
  const first = window();
  const cost = await storeCost(during);
  return { ...cost, windows: window() - first + 1 };
}

/** What a limit lets through: exactly `limit` in one window, at most `limit` a window over several. */
function expectLetThrough(count: number, limit: number, windows: number, what = "") {
  if (windows === 1) expect([what, count]).toEqual([what, limit]);
  else expect(count, what).toBeLessThanOrEqual(limit * windows);
}

/**
 * Postgres statements and Redis commands that `during` caused, read at the stores (`statements` names the
 * Postgres ones, for a failure's message).
 */
async function storeCost<T>(during: () => Promise<T>) {
  const [pg0, queries0, redis0] = [
    await statementCalls(app.db),
    await statementsByQuery(app.db),
    await commandCounts(app.redis),
  ];
  const value = await during();
  await sleep(100); // a background claim finishing after the last answer
  const [pg1, queries1, redis1] = [
    await statementCalls(app.db),
    await statementsByQuery(app.db),
    await commandCounts(app.redis),
  ];
  const statements = Object.entries(queries1)
    .filter(([q, n]) => n !== (queries0[q] ?? 0))
    .map(([q, n]) => `${n - (queries0[q] ?? 0)}× ${q.replaceAll(/\s+/g, " ").slice(0, 120)}`)
    .join("\n");
  const commands = commandDelta(redis0, redis1);
  return { value, postgres: pg1 - pg0, statements, redis: total(commands), commands };
}

/** `n` calls, `concurrency` at a time. */
async function flood<T>(n: number, concurrency: number, call: () => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  let started = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (started < n) {
        started++;
        out.push(await call());
      }
    }),
  );
  return out;
}

const statuses = (rs: { status: number }[]) => {
  const by: Record<number, number> = {};
  for (const r of rs) by[r.status] = (by[r.status] ?? 0) + 1;
  return by;
};

/** Every 429 is the contract's: RATE_LIMITED, a whole-second Retry-After ≥ 1, the wait in the body too. */
function expectRateLimited(rs: ApiResponse[]) {
  const refused = rs.filter((r) => r.status === 429);
  expect(refused.length).toBeGreaterThan(0);
  for (const r of refused) {
    const wait = Number(r.headers.get("retry-after"));
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(WINDOW_SECONDS);
    expect(r.body).toEqual({
      error: {
        code: "RATE_LIMITED",
        message: expect.any(String),
        retryAfterSeconds: wait,
        requestId: expect.any(String),
      },
    });
  }
}

async function orderOf(userId: string, sale: { productToken: string }, headers = address()) {
  const res = await app.api.buy(sale.productToken, userId, 1, headers);
  expect(res.status).toBe(202);
  return String(res.body.orderId);
}

const getOrder = async (orderId: string, userId: string, headers: Record<string, string>, action = "") =>
  app.api.call(action ? "POST" : "GET", `/api/orders/${orderId}${action ? `/${action}` : ""}`, {
    token: await shopperToken(userId),
    headers,
  });

describe("a flood from one token", () => {
  it("GET /api/orders/:id reaches the stores at most at the user limit; other shoppers are unaffected", async () => {
    const sale = await app.api.createSale({ stock: 20 });
    const flooderIp = address();
    const mine = await orderOf("flooder", sale, flooderIp);
    const theirs = await orderOf("bystander", sale);
    await app.drain();
    const cost = await floodCost(() => flood(120, 16, () => getOrder(mine, "flooder", flooderIp)));
    const allowed = cost.value.filter((r) => r.status === 200);
    console.log(
      `order reads: ${JSON.stringify(statuses(cost.value))}, postgres ${cost.postgres}, redis ${cost.redis}`,
    );
    expectLetThrough(allowed.length, USER_LIMIT, cost.windows);
    expect(allowed.length + cost.value.filter((r) => r.status === 429).length).toBe(120);
    expectRateLimited(cost.value);
    // one query per allowed read (the order is written, not queued); the limit: at most two claims a window
    expect(cost.postgres, cost.statements).toBeLessThanOrEqual(allowed.length);
    expect(cost.redis, JSON.stringify(cost.commands)).toBeLessThanOrEqual(allowed.length + 4 * cost.windows);
    // the same address, another shopper: read and buy as usual
    expect((await getOrder(theirs, "bystander", flooderIp)).status).toBe(200);
    expect((await app.api.buy(sale.productToken, "bystander", 1, flooderIp)).status).toBe(202);
  });

  it("pay, cancel and order stream openings reach the stores at most at the user limit", async () => {
    const sale = await app.api.createSale({ stock: 20 });
    const ip = address();
    const toPay = await orderOf("payer", sale, ip);
    const toCancel = await orderOf("canceller", sale, ip);
    const toWatch = await orderOf("watcher", sale, ip);
    await app.drain();
    const pays = await floodCost(() => flood(60, 12, () => getOrder(toPay, "payer", ip, "pay")));
    const cancels = await floodCost(() => flood(60, 12, () => getOrder(toCancel, "canceller", ip, "cancel")));
    const token = await shopperToken("watcher");
    const streams: SseReader[] = [];
    const url = `${app.worker.url}/api/orders/${toWatch}/events`;
    const opens = await floodCost(() =>
      flood(40, 10, async () => {
        const s = await openEvents(url, { Authorization: `Bearer ${token}`, ...ip });
        if (s.status === 200) streams.push(s);
        else s.close();
        return s;
      }),
    );
    for (const s of streams) s.close();
    await sleep(2500); // the closed streams end (and their feed stops reading) before the next test counts
    for (const [what, cost, perAllowed] of [
      ["pay", pays, 4],
      ["cancel", cancels, 4],
      ["order stream", opens, 2],
    ] as const) {
      const by = statuses(cost.value);
      console.log(`${what}: ${JSON.stringify(by)}, postgres ${cost.postgres}, redis ${cost.redis}`);
      expectLetThrough(by[200] ?? 0, USER_LIMIT, cost.windows, what);
      expect([what, by[429]]).toEqual([what, cost.value.length - (by[200] ?? 0)]);
      expect(cost.postgres, cost.statements).toBeLessThanOrEqual((by[200] ?? 0) * perAllowed);
    }
    expectRateLimited([...pays.value, ...cancels.value]);
    for (const s of opens.value.filter((s) => s.status === 429))
      expect(JSON.parse(s.text).error.code).toBe("RATE_LIMITED");
  });
});

describe("per client address", () => {
  it("many shoppers behind one address reach the stores at most at the address limit; another address is not limited", async () => {
    const sale = await app.api.createSale({ stock: 5 });
    const ip = address();
    const users = Array.from({ length: 18 }, (_, i) => `crowd-${i}`);
    const cost = await floodCost(() =>
      flood(users.length * 5, 12, async () => {
        const user = users[Math.floor(Math.random() * users.length)] as string;
        return getOrder(newOrderId(sale.saleId), user, ip);
      }),
    );
    const by = statuses(cost.value);
    console.log(`one address, 18 shoppers: ${JSON.stringify(by)}, postgres ${cost.postgres}`);
    expect(by[404] ?? 0).toBeLessThanOrEqual(IP_LIMIT * cost.windows);
    expect((by[404] ?? 0) + (by[429] ?? 0)).toBe(cost.value.length);
    expectRateLimited(cost.value);
    expect(cost.postgres, cost.statements).toBeLessThanOrEqual(by[404] ?? 0);
    expect((await getOrder(newOrderId(sale.saleId), "elsewhere", address())).status).toBe(404);
  });

  it("anonymous sale reads and sale stream openings are limited per address", async () => {
    const sale = await app.api.createSale({ stock: 5 });
    const ip = address();
    expect((await app.api.call("GET", `/api/sales/${sale.saleId}`)).status).toBe(200);
    let started = 0;
    const reads = await floodCost(() => {
      started = Date.now();
      return flood(IP_LIMIT + 40, 12, () =>
        app.api.call("GET", `/api/sales/${sale.saleId}`, { headers: ip }),
      );
    });
    const halfSeconds = Math.ceil((Date.now() - started) / 500);
    const by = statuses(reads.value);
    expectLetThrough(by[200] ?? 0, IP_LIMIT, reads.windows);
    expect((by[200] ?? 0) + (by[429] ?? 0)).toBe(IP_LIMIT + 40);
    expectRateLimited(reads.value);
    // answered from the process's sale list: one read of it (SMEMBERS, then a pipeline) per half second
    expect(reads.commands.smembers ?? 0).toBeLessThanOrEqual(halfSeconds + 1);
    const streams = await floodCost(() =>
      flood(IP_LIMIT + 5, 10, () => openEvents(`${app.worker.url}/api/sales/${sale.saleId}/events`, ip)),
    );
    for (const s of streams.value) s.close();
    const opened = statuses(streams.value);
    expectLetThrough(opened[200] ?? 0, IP_LIMIT, streams.windows);
    expect((opened[200] ?? 0) + (opened[429] ?? 0)).toBe(IP_LIMIT + 5);
    expect((await app.api.call("GET", `/api/sales/${sale.saleId}`, { headers: address() })).status).toBe(200);
  });
});

describe("reads answered from memory", () => {
  it("an order in a final status is read from Postgres at most once, then from memory (reads and stream openings)", async () => {
    const ip = address();
    const cancelled = await orderOf("finalist", await app.api.createSale({ stock: 10 }), ip);
    const expired = await orderOf(
      "finalist",
      await app.api.createSale({ stock: 10, paymentWindowSeconds: 1 }),
      ip,
    );
    await app.drain();
    expect((await getOrder(cancelled, "finalist", ip, "cancel")).status).toBe(200);
    await app.drain(); // the expiry job of the other order, delivered after its 1 s window
    const cost = await storeCost(async () => {
      const reads = [];
      for (let i = 0; i < 3; i++) {
        reads.push(await getOrder(cancelled, "finalist", ip));
        reads.push(await getOrder(expired, "finalist", ip));
      }
      return reads;
    });
    expect(cost.value.map((r) => r.body.status)).toEqual(Array(3).fill(["cancelled", "expired"]).flat());
    // the expired order was changed by the expiry job, not by a route: read once; the cancelled one never
    expect(cost.postgres, cost.statements).toBeLessThanOrEqual(1);
    expect((await getOrder(cancelled, "someone-else", ip)).status).toBe(404);
    const token = await shopperToken("finalist");
    const opened = await storeCost(async () => {
      const s = await openEvents(`${app.worker.url}/api/orders/${cancelled}/events`, {
        Authorization: `Bearer ${token}`,
        ...ip,
      });
      const first = await s.next();
      s.close();
      return first.json.status;
    });
    expect([opened.value, opened.postgres], opened.statements).toEqual(["cancelled", 0]);
  });
});

describe("sale reads for caches", () => {
  it("carry an ETag of everything but serverTime and Cache-Control; If-None-Match is 304 until the sale changes", async () => {
    const sale = await app.api.createSale({ stock: 10 });
    const ip = address();
    for (const path of [`/api/sales/${sale.saleId}`, "/api/sales"]) {
      const first = await app.api.call("GET", path, { headers: ip });
      const tag = first.headers.get("etag") as string;
      expect([path, first.status, tag]).toEqual([path, 200, expect.stringMatching(/^W\/"[\w-]+"$/)]);
      expect(first.headers.get("cache-control")).toMatch(/^public, max-age=1\b/);
      await sleep(20); // a later serverTime, the same tag
      const again = await app.api.call("GET", path, { headers: { ...ip, "If-None-Match": tag } });
      expect([path, again.status, again.text, again.headers.get("etag")]).toEqual([path, 304, "", tag]);
      expect(again.headers.get("cache-control")).toMatch(/^public, max-age=1\b/);
      const other = await app.api.call("GET", path, { headers: { ...ip, "If-None-Match": 'W/"other"' } });
      expect([path, other.status]).toEqual([path, 200]);
    }
    const before = await app.api.call("GET", `/api/sales/${sale.saleId}`, { headers: ip });
    expect((await app.api.buy(sale.productToken, "etag-buyer", 1, ip)).status).toBe(202);
    await sleep(600); // the process's sale list is kept half a second
    const tag = before.headers.get("etag") as string;
    const after = await app.api.call("GET", `/api/sales/${sale.saleId}`, {
      headers: { ...ip, "If-None-Match": tag },
    });
    expect([after.status, after.body.remaining]).toEqual([200, 9]);
    expect(after.headers.get("etag")).not.toBe(tag);
  });
});

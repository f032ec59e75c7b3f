import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import reserveStockLua from "../../../lua/reserve-stock.lua";
import { startApp } from "../../support/app";
import { appForFile } from "../../support/app-per-file";
import { commandCounts, commandDelta, snapshot } from "../../support/redis-inspect";
import { shopperToken, unsignedToken } from "../../support/shopper";

/**
 * POST /api/buy/:productToken refused: the contract's outcomes, bad input, the front door's answers from
 * memory, and the stores down. Happy paths: buy.happy.test.ts.
 */
const app = appForFile({
  vars: { RATE_LIMIT_USER_PER_WINDOW: "1000", CATALOG_REFRESH_MS: "600000" },
  // Redis stopped and its scripts flushed here: the stack's one server, whatever the suite's layout
  oneServer: true,
});

async function eventually<T>(
  call: () => Promise<T>,
  ok: (value: T) => boolean,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await call();
    if (ok(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
}

const errorCode = (body: Record<string, unknown>) => (body.error as { code?: string } | undefined)?.code;

describe("the contract's outcomes", () => {
  it("SALE_NOT_STARTED, SALE_ENDED and SALE_PAUSED", async () => {
    const now = Date.now();
    const upcoming = await app.api.createSale({
      startsAt: new Date(now + 3600_000).toISOString(),
      endsAt: new Date(now + 7200_000).toISOString(),
    });
    expect(errorCode((await app.api.buy(upcoming.productToken, "w1", 1)).body)).toBe("SALE_NOT_STARTED");
    const ended = await app.api.createSale({
      startsAt: new Date(now - 7200_000).toISOString(),
      endsAt: new Date(now - 3600_000).toISOString(),
    });
    expect(errorCode((await app.api.buy(ended.productToken, "w1", 1)).body)).toBe("SALE_ENDED");
    const live = await app.api.createSale();
    expect((await app.api.admin("POST", `/sales/${live.saleId}/pause`)).body).toMatchObject({
      status: "paused",
    });
    const paused = await app.api.buy(live.productToken, "w1", 1);
    expect([paused.status, errorCode(paused.body)]).toEqual([409, "SALE_PAUSED"]);
    expect((await app.api.admin("POST", `/sales/${live.saleId}/resume`)).body).toMatchObject({
      status: "live",
    });
    expect((await app.api.buy(live.productToken, "w1", 1)).status).toBe(202);
  });

  it("UNKNOWN_PRODUCT for tokens outside the Bloom filter, with no Redis command at all", async () => {
    const sale = await app.api.createSale();
    await app.api.buy(sale.productToken, "warm", 1);
    await app.drain();
    const before = await commandCounts(app.redis);
    for (const token of ["nope", "A".repeat(43), `${sale.productToken.slice(0, 42)}x`, "../../etc", "%00"]) {
      const res = await app.api.buy(encodeURIComponent(token), "enum", 1);
      expect([res.status, errorCode(res.body)]).toEqual([404, "UNKNOWN_PRODUCT"]);
    }
    expect(commandDelta(before, await commandCounts(app.redis))).toEqual({});
  });

  it("RATE_LIMITED per user with Retry-After", async () => {
    const limited = await startApp({
      vars: { RATE_LIMIT_USER_PER_WINDOW: "3", RATE_LIMIT_WINDOW_SECONDS: "30" },
    });
    try {
      const sale = await limited.api.createSale({ stock: 100, perUserLimit: 100 });
      for (let i = 0; i < 3; i++)
        expect((await limited.api.buy(sale.productToken, "hammer", 1)).status).toBe(202);
      const res = await limited.api.buy(sale.productToken, "hammer", 1);
      expect([res.status, errorCode(res.body)]).toEqual([429, "RATE_LIMITED"]);
      expect(Number(res.headers.get("Retry-After"))).toBeGreaterThanOrEqual(1);
      expect((await limited.api.buy(sale.productToken, "calm", 1)).status).toBe(202);
    } finally {
      await limited.stop();
    }
  });

  it("RATE_LIMITED per IP (CF-Connecting-IP)", async () => {
    const limited = await startApp({
      vars: { RATE_LIMIT_IP_PER_WINDOW: "2", RATE_LIMIT_WINDOW_SECONDS: "30" },
    });
    try {
      const sale = await limited.api.createSale({ stock: 100 });
      const ip = { "CF-Connecting-IP": "203.0.113.7" };
      expect((await limited.api.buy(sale.productToken, "ip1", 1, ip)).status).toBe(202);
      expect((await limited.api.buy(sale.productToken, "ip2", 1, ip)).status).toBe(202);
      const res = await limited.api.buy(sale.productToken, "ip3", 1, ip);
      expect([res.status, errorCode(res.body)]).toEqual([429, "RATE_LIMITED"]);
      expect(
        (await limited.api.buy(sale.productToken, "ip3", 1, { "CF-Connecting-IP": "203.0.113.8" })).status,
      ).toBe(202);
    } finally {
      await limited.stop();
    }
  });

  it("the same Idempotency-Key gets the first answer back and reserves once", async () => {
    const sale = await app.api.createSale({ stock: 10 });
    const headers = { "Idempotency-Key": "click-42" };
    const replies = await Promise.all(
      Array.from({ length: 5 }, () => app.api.buy(sale.productToken, "idem", 1, headers)),
    );
    const ids = new Set(replies.map((r) => r.body.orderId));
    expect(replies.map((r) => r.status)).toEqual([202, 202, 202, 202, 202]);
    expect(ids.size).toBe(1);
    expect((await app.api.stats(sale.saleId)).body).toMatchObject({ remaining: 9 });
    const other = await app.api.buy(sale.productToken, "idem-2", 1, headers);
    expect(other.body.orderId).not.toBe(replies[0]?.body.orderId);
  });
});

describe("bad input gets 4xx and changes nothing", () => {
  it("rejects malformed bodies, quantities and tokens without touching Redis", async () => {
    const sale = await app.api.createSale({ stock: 5 });
    const token = await shopperToken("bad-input");
    const path = `/api/buy/${sale.productToken}`;
    await app.drain();
    const before = await snapshot(app.redis);
    const commandsBefore = await commandCounts(app.redis);
    const cases: {
      rawBody?: string;
      token?: string;
      headers?: Record<string, string>;
      status: number;
      code: string;
    }[] = [
      { rawBody: "{", token, status: 400, code: "INVALID_REQUEST" },
      { rawBody: "[1]", token, status: 400, code: "INVALID_REQUEST" },
      { rawBody: '"2"', token, status: 400, code: "INVALID_REQUEST" },
      ...[0, -1, 1.5, "2", 1e9, 10_001, null, true].map((q) => ({
        rawBody: JSON.stringify({ quantity: q }),
        token,
        status: 400,
        code: "INVALID_REQUEST",
      })),
      {
        rawBody: JSON.stringify({ quantity: 1, pad: "x".repeat(2000) }),
        token,
        status: 400,
        code: "INVALID_REQUEST",
      },
      {
        rawBody: "{}",
        token,
        headers: { "Idempotency-Key": "x".repeat(300) },
        status: 400,
        code: "INVALID_REQUEST",
      },
      { rawBody: "{}", status: 401, code: "UNAUTHENTICATED" },
      { rawBody: "{}", token: "not.a.jwt", status: 401, code: "UNAUTHENTICATED" },
      { rawBody: "{}", token: unsignedToken("bad-input"), status: 401, code: "UNAUTHENTICATED" },
      {
        rawBody: "{}",
        token: await shopperToken("bad-input", { secret: "another-secret-entirely-123" }),
        status: 401,
        code: "UNAUTHENTICATED",
      },
      {
        rawBody: "{}",
        token: await shopperToken("bad-input", { expiresInSeconds: -60 }),
        status: 401,
        code: "UNAUTHENTICATED",
      },
      { rawBody: "{}", token: await shopperToken(""), status: 401, code: "UNAUTHENTICATED" },
    ];
    for (const c of cases) {
      const res = await app.api.call("POST", path, {
        ...(c.rawBody === undefined ? {} : { rawBody: c.rawBody }),
        ...(c.token ? { token: c.token } : {}),
        headers: { "Content-Type": "application/json", ...c.headers },
      });
      expect([res.status, errorCode(res.body)], JSON.stringify(c).slice(0, 120)).toEqual([c.status, c.code]);
      expect(res.text).not.toMatch(/at .*\.(ts|js):\d+/);
    }
    const huge = await app.api.call("POST", path, { rawBody: "x".repeat(100 * 1024), token });
    expect([huge.status, errorCode(huge.body)]).toEqual([400, "INVALID_REQUEST"]);
    expect(await snapshot(app.redis)).toEqual(before);
    expect(commandDelta(commandsBefore, await commandCounts(app.redis)).evalsha).toBeUndefined();
  });
});

describe("refusals answered from memory at the front door", () => {
  /** Status, body and every header but the date: what a client can tell apart. */
  async function answer(res: Response) {
    const headers = [...res.headers].filter(([name]) => !["date", "content-length"].includes(name)).sort();
    return { status: res.status, body: await res.text(), headers };
  }

  it("answers a sold-out sale and an unknown product exactly as the app does", async () => {
    const sale = await app.api.createSale({ stock: 1, perUserLimit: 1 });
    expect((await app.api.buy(sale.productToken, "door-1", 1)).status).toBe(202);
    expect((await app.api.buy(sale.productToken, "door-2", 1)).status).toBe(410); // the process learns it
    await app.drain(); // door-1's order write runs its own commands: let it land before counting
    const buy = async (path: string, user: string, extra: Record<string, string> = {}) =>
      fetch(`${app.worker.url}${path}`, {
        method: "POST",
        // one request id for both ways, so their answers can be compared byte for byte
        headers: {
          Authorization: `Bearer ${await shopperToken(user)}`,
          "X-Request-Id": "door-or-app",
          ...extra,
        },
        body: '{"quantity":1}',
      });
    const before = await commandCounts(app.redis);
    // from memory at the front door (no Redis command) ...
    const door410 = await answer(await buy(`/api/buy/${sale.productToken}`, "door-3"));
    const door404 = await answer(await buy(`/api/buy/${"Q".repeat(43)}`, "door-3"));
    const { hincrby = 0, expire = 0, ...perAttempt } = commandDelta(before, await commandCounts(app.redis));
    expect(perAttempt).toEqual({});
    // ... and through the app (an Idempotency-Key goes past the front door to the route)
    const app410 = await answer(
      await buy(`/api/buy/${sale.productToken}`, "door-4", { "Idempotency-Key": "through-the-app" }),
    );
    const app404 = await answer(
      await buy(`/api/buy/${"Q".repeat(43)}`, "door-4", { "Idempotency-Key": "through-the-app" }),
    );
    expect(door410).toEqual(app410);
    expect(door404).toEqual(app404);
    expect(door410.status).toBe(410);
    expect(door404.status).toBe(404);
    expect([hincrby, expire].every((n) => n <= 2)).toBe(true);
  });

  it("leaves to the app what it must judge: a bad body, a bad token, oversized headers", async () => {
    const sale = await app.api.createSale({ stock: 1, perUserLimit: 1 });
    expect((await app.api.buy(sale.productToken, "judge-1", 1)).status).toBe(202);
    expect((await app.api.buy(sale.productToken, "judge-2", 1)).status).toBe(410);
    const post = (headers: Record<string, string>, body: string) =>
      fetch(`${app.worker.url}/api/buy/${sale.productToken}`, { method: "POST", headers, body });
    const auth = { Authorization: `Bearer ${await shopperToken("judge-3")}` };
    const badBody = await post(auth, '{"quantity":0}');
    expect([badBody.status, errorCode(await badBody.json())]).toEqual([400, "INVALID_REQUEST"]);
    const notJson = await post(auth, "{");
    expect([notJson.status, errorCode(await notJson.json())]).toEqual([400, "INVALID_REQUEST"]);
    const badUtf8 = await fetch(`${app.worker.url}/api/buy/${sale.productToken}`, {
      method: "POST",
      headers: auth,
      body: new Uint8Array([0x7b, 0xff, 0x7d]),
    });
    expect([badUtf8.status, errorCode(await badUtf8.json())]).toEqual([400, "INVALID_REQUEST"]);
    const noToken = await post({}, '{"quantity":1}');
    expect([noToken.status, errorCode(await noToken.json())]).toEqual([401, "UNAUTHENTICATED"]);
    const huge = await post({ ...auth, "X-Padding": "x".repeat(40 * 1024) }, '{"quantity":1}');
    expect([huge.status, errorCode(await huge.json())]).toEqual([431, "HEADERS_TOO_LARGE"]);
    const ok = await post(auth, '{"quantity":1}');
    expect([ok.status, errorCode(await ok.json())]).toEqual([410, "SOLD_OUT"]);
  });
});

describe("stores down", () => {
  it("answers 503 UNAVAILABLE with Retry-After when Redis is unreachable, and reserves nothing", async () => {
    const sale = await app.api.createSale({ stock: 4 });
    await app.api.buy(sale.productToken, "pre", 1);
    await app.redis.save();
    await app.stack.redis.kill();
    try {
      const res = await app.api.buy(sale.productToken, "during-outage", 1);
      expect([res.status, errorCode(res.body)]).toEqual([503, "UNAVAILABLE"]);
      expect(Number(res.headers.get("Retry-After"))).toBeGreaterThanOrEqual(1);
      expect(res.text).not.toMatch(/Error|at .*:\d+/);
    } finally {
      await app.stack.redis.restart({ empty: false });
      await app.reconnect();
    }
    const stats = await eventually(
      () => app.api.stats(sale.saleId),
      (r) => r.status === 200,
    );
    expect(stats.body).toMatchObject({ remaining: 3 });
    expect((await app.api.buy(sale.productToken, "after-outage", 1)).status).toBe(202);
  });

  it("runs the script again after SCRIPT FLUSH (NOSCRIPT falls back to EVAL)", async () => {
    const sale = await app.api.createSale({ stock: 4 });
    await app.api.buy(sale.productToken, "ns1", 1);
    await app.redis.script("FLUSH");
    // the order write that follows the first buy may run its own script in the same moment, so the
    // reserve script is identified by its SHA-1 rather than by counting EVAL calls
    const sha = createHash("sha1").update(reserveStockLua).digest("hex");
    expect(await app.redis.script("EXISTS", sha)).toEqual([0]);
    expect((await app.api.buy(sale.productToken, "ns2", 1)).status).toBe(202);
    expect(await app.redis.script("EXISTS", sha)).toEqual([1]);
  });
});

import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../../../local/ports";
import type { ServerRuntime } from "../../../local/server-runtime";
import { startWorker, type WorkerRuntime } from "../../../local/worker-runtime";
import { type AppUnderTest, startApp, testRuntime } from "../../support/app";

/**
 * What only the server runtimes have (src/runtime/server.ts): the task set drained before exit, the
 * pages of public/ with public/_headers, and the client address from TRUST_PROXY_HEADER or the socket.
 * Run with the engine on Deno and on Bun (FLASH_RUNTIME), never in workerd.
 */
const runtime = testRuntime();

/** A proxy in front of QStash that holds every request until `release()`: a publish still pending. */
async function holdingProxy() {
  let target = "";
  const held: Array<() => void> = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () =>
      held.push(() => {
        const url = new URL(req.url ?? "/", target);
        const out = httpRequest(
          url,
          { method: req.method, headers: { ...req.headers, host: url.host } },
          (r) => {
            res.writeHead(r.statusCode ?? 502, r.headers);
            r.pipe(res);
          },
        );
        out.on("error", () => res.destroy());
        out.end(Buffer.concat(chunks));
      }),
    );
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    held: () => held.length,
    setTarget(url: string) {
      target = url;
    },
    release() {
      for (const send of held.splice(0)) send();
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const PAGES = [
  "/",
  "/admin",
  "/admin.html",
  "/docs",
  "/docs.html",
  "/assets/shop.js",
  "/assets/api-reference.js",
  "/assets/admin.css",
  "/_headers",
  "/nope.html",
];
const HEADERS_FILE_NAMES = [
  "content-security-policy",
  "x-content-type-options",
  "referrer-policy",
  "x-frame-options",
  "permissions-policy",
  "cache-control",
  "x-robots-tag",
];

describe(`on ${runtime}`, () => {
  let app: AppUnderTest;
  beforeAll(async () => {
    app = await startApp({ runtime, vars: { RATE_LIMIT_USER_PER_WINDOW: "1000" } });
  });
  afterAll(async () => {
    await app?.stop();
  });

  it("SIGTERM waits for a pending publish: the order job reaches QStash before the process exits", async () => {
    const proxy = await holdingProxy();
    const held = await startApp({ runtime, vars: { QSTASH_URL: proxy.url } });
    proxy.setTarget(held.stack.vars.QSTASH_URL);
    try {
      const engine = held.worker as ServerRuntime;
      const sale = await held.api.createSale({ stock: 5 });
      const buy = await held.api.buy(sale.productToken, "drain", 1);
      expect(buy.status).toBe(202);
      const orderId = (buy.body as { orderId: string }).orderId;
      await waitFor(async () => proxy.held() > 0, { timeoutMs: 5_000, what: "the publish at the proxy" });
      engine.child.kill("SIGTERM");
      // the process may not exit while its publish is pending
      await new Promise((r) => setTimeout(r, 500));
      expect(engine.child.exitCode).toBeNull();
      proxy.release();
      expect(await engine.exited).toBe(0);
      // the publish reached the QStash stand-in (which now retries its delivery to the stopped engine)
      expect(held.stack.qstash.pending()).toBeGreaterThan(0);
      expect(await held.redis.hexists(`sale:{s:${sale.saleId}}:orders`, orderId)).toBe(1);
    } finally {
      proxy.release();
      await held.stop();
      await proxy.close();
    }
  });

  it("serves public/ with the headers of public/_headers, as Workers static assets do", async () => {
    let site: WorkerRuntime | undefined;
    try {
      site = await startWorker({ vars: {}, assets: true });
      for (const path of PAGES) {
        const [onWorkers, here] = (await Promise.all(
          [site.url, app.worker.url].map((base) => fetch(`${base}${path}`, { redirect: "manual" })),
        )) as [Response, Response];
        const seen = (res: Response) => ({
          status: res.status,
          location: res.headers.get("location")?.replace(/^https?:\/\/[^/]+/, "") ?? null,
          type: res.status === 200 ? res.headers.get("content-type")?.split(";")[0] : null,
          headers: Object.fromEntries(HEADERS_FILE_NAMES.map((n) => [n, res.headers.get(n)])),
        });
        expect({ path, ...seen(here) }).toEqual({ path, ...seen(onWorkers) });
      }
      const admin = await fetch(`${app.worker.url}/admin`);
      expect(admin.headers.get("cache-control")).toBe("no-store");
      expect(admin.headers.get("content-security-policy")).toMatch(/^default-src 'self'/);
    } finally {
      await site?.stop();
    }
  });

  it("client address: the socket's unless TRUST_PROXY_HEADER names a header (its last entry)", async () => {
    const limits = { RATE_LIMIT_IP_PER_WINDOW: "2", RATE_LIMIT_WINDOW_SECONDS: "30", TRUST_PROXY_HEADER: "" };
    const direct = await startApp({ runtime, vars: limits });
    try {
      const s = await direct.api.createSale({ stock: 100 });
      // a client cannot pick its own address with a header nobody vouches for
      for (const [user, ip] of [
        ["d1", "203.0.113.1"],
        ["d2", "203.0.113.2"],
      ] as const)
        expect((await direct.api.buy(s.productToken, user, 1, { "CF-Connecting-IP": ip })).status).toBe(202);
      expect(
        (await direct.api.buy(s.productToken, "d3", 1, { "CF-Connecting-IP": "203.0.113.3" })).status,
      ).toBe(429);
    } finally {
      await direct.stop();
    }
    const proxied = await startApp({ runtime, vars: { ...limits, TRUST_PROXY_HEADER: "X-Forwarded-For" } });
    try {
      const s = await proxied.api.createSale({ stock: 100 });
      const via = (client: string) => ({ "X-Forwarded-For": `198.51.100.9, ${client}` });
      expect((await proxied.api.buy(s.productToken, "p1", 1, via("203.0.113.7"))).status).toBe(202);
      expect((await proxied.api.buy(s.productToken, "p2", 1, via("203.0.113.7"))).status).toBe(202);
      expect((await proxied.api.buy(s.productToken, "p3", 1, via("203.0.113.7"))).status).toBe(429);
      expect((await proxied.api.buy(s.productToken, "p4", 1, via("203.0.113.8"))).status).toBe(202);
    } finally {
      await proxied.stop();
    }
  });
});

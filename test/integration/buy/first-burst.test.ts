import { Agent } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exampleSecrets, startWorker, type WorkerRuntime, wranglerVars } from "../../../local/worker-runtime";
import { type AppUnderTest, startApp } from "../../support/app";
import { checkedFetch } from "../../support/openapi-check";
import { shopperToken } from "../../support/shopper";

/**
 * The first burst of a sale: 50 shoppers whose requests reach one isolate in the same instant, with
 * the worker served as production serves it (the deployed bundle in workerd through Miniflare). No
 * request may wait on another request's I/O: workerd cancels such a request ("code had hung", "Cannot
 * perform I/O on behalf of a different request") and the shopper gets a 500.
 */

const SHOPPERS = 50;
const STOCK = 20;
const REFRESH_MS = 300;
const CONTEXT_WARNING = /different request context|different request|code had hung/i;

let app: AppUnderTest;
const workers: WorkerRuntime[] = [];

beforeAll(async () => {
  app = await startApp();
});
afterAll(async () => {
  for (const worker of workers) await worker.stop().catch(() => {});
  await app?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A new workerd (a fresh isolate: no catalog, no clock offset, no open batch) with its log captured. */
async function freshWorker(vars: Record<string, string> = {}) {
  const log: string[] = [];
  const worker = await startWorker({
    vars: {
      ...wranglerVars(),
      ...exampleSecrets(),
      ...app.stack.vars,
      RATE_LIMIT_USER_PER_WINDOW: "1000",
      RATE_LIMIT_IP_PER_WINDOW: "100000",
      ...vars,
    },
    onOutput: (text) => log.push(text),
  });
  workers.push(worker);
  return { worker, log };
}

/**
 * Opens one connection per shopper first, then starts every buy in the same tick: the requests reach
 * workerd together, as a sale's opening crowd does.
 */
async function burst(url: string, productToken: string, tag: string) {
  const dispatcher = new Agent({ connections: SHOPPERS, pipelining: 0 });
  try {
    const users = Array.from({ length: SHOPPERS }, (_, i) => `${tag}-${i}`);
    const tokens = await Promise.all(users.map((u) => shopperToken(u)));
    await Promise.all(users.map(() => checkedFetch(`${url}/api/health`, { dispatcher } as RequestInit)));
    const answers = await Promise.all(
      tokens.map(async (token) => {
        const res = await checkedFetch(`${url}/api/buy/${productToken}`, {
          method: "POST",
          headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
          body: JSON.stringify({ quantity: 1 }),
          dispatcher,
        } as RequestInit);
        const text = await res.text();
        return { status: res.status, text };
      }),
    );
    return answers;
  } finally {
    await dispatcher.close();
  }
}

/** Every 202'd order reaches Postgres (QStash delivers to the burst's worker; no sweeper runs here). */
async function ordersInPostgres(saleId: string, want: number, timeoutMs = 30_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await app.db.query("select count(*)::int as n from orders where sale_id = $1", [saleId]);
    const n = Number(rows[0].n);
    if (n >= want || Date.now() > deadline) return n;
    await sleep(200);
  }
}

/** One buy, repeated until the isolate's catalog refresh has brought the new sale's token (404 before). */
async function warmUp(url: string, productToken: string, userId: string, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  const headers = { Authorization: `Bearer ${await shopperToken(userId)}` };
  for (;;) {
    const res = await checkedFetch(`${url}/api/buy/${productToken}`, { method: "POST", headers });
    await res.text();
    if (res.status !== 404 || Date.now() > deadline) return res.status;
    await sleep(100);
  }
}

function summary(answers: { status: number; text: string }[]) {
  const byStatus: Record<number, number> = {};
  for (const a of answers) byStatus[a.status] = (byStatus[a.status] ?? 0) + 1;
  return byStatus;
}

async function expectBurstServed(
  answers: { status: number; text: string }[],
  saleId: string,
  log: string[],
  accepted: number,
  rows = accepted,
) {
  const statuses = summary(answers);
  const failures = answers.filter((a) => a.status >= 500).map((a) => `${a.status} ${a.text.slice(0, 160)}`);
  expect({ statuses, failures: failures.slice(0, 3) }).toEqual({
    statuses: { 202: accepted, 410: SHOPPERS - accepted },
    failures: [],
  });
  expect(await ordersInPostgres(saleId, rows)).toBe(rows);
  expect(log.join("").match(CONTEXT_WARNING)?.[0] ?? null).toBeNull();
}

describe("the first burst of a sale, 50 requests in the same instant", () => {
  it("a fresh isolate on a new sale answers every request (no 5xx) and every 202 reaches Postgres", async () => {
    for (let round = 0; round < 3; round++) {
      const sale = await app.api.createSale({ stock: STOCK, perUserLimit: 1 });
      const { worker, log } = await freshWorker();
      const answers = await burst(worker.url, sale.productToken, `cold-${round}`);
      await expectBurstServed(answers, sale.saleId, log, STOCK);
      await worker.stop();
    }
  }, 300_000);

  it("an isolate whose catalog and clock refreshes are due answers every request of the burst", async () => {
    const { worker, log } = await freshWorker({
      CATALOG_REFRESH_MS: String(REFRESH_MS),
      STORE_CLOCK_REFRESH_MS: String(REFRESH_MS),
    });
    for (let round = 0; round < 3; round++) {
      const sale = await app.api.createSale({ stock: STOCK + 1, perUserLimit: 1 });
      // the isolate learns the sale and measures the clock, then sits quiet until both refreshes are due
      const warm = await warmUp(worker.url, sale.productToken, `due-warm-${round}`);
      expect(warm).toBe(202);
      await sleep(REFRESH_MS * 3);
      const answers = await burst(worker.url, sale.productToken, `due-${round}`);
      await expectBurstServed(answers, sale.saleId, log, STOCK, STOCK + 1);
    }
  }, 300_000);
});

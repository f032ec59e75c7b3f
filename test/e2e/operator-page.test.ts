import { Redis } from "ioredis";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { saleKeys } from "../../src/stock/keys";
import {
  DESKTOP,
  hasChromium,
  launchBrowser,
  PHONE,
  SKIP_REASON,
  screenshot,
  watchErrors,
} from "../support/browser";
import { ADMIN_TOKEN, type SiteClient, siteClient } from "../support/site-client";
import { type Site, startSite } from "../support/site-worker";
import { startWebhookReceiver } from "../support/webhook-receiver";

let site: Site;
let client: SiteClient;
let browser: Browser;
let page: Page;
let errors: string[] = [];
/** The operator page's API requests, in order ("GET /api/admin/sales/…/stats"). */
const requests: string[] = [];
/** Polls of the live view's figures among `list` (the stream replaces them while it is up). */
const figurePolls = (list: string[]) =>
  list.filter((r) => /^GET \/api\/admin\/sales\/[^/]+\/(stats|timeline)$/.test(r));

const text = async (selector: string) => ((await page.textContent(selector)) ?? "").trim();
const remainingInChart = async () =>
  Number(
    /Remaining stock: (\d+)/.exec((await page.getAttribute("#stock-chart svg", "aria-label")) ?? "")?.[1],
  );
const legendCount = async (series: string) =>
  Number(await text(`#outcome-legend [data-series="${series}"] strong`));

/** A burst of shoppers, one unit each, `perRound` at a time every `everyMs`: what a flash sale's first seconds look like. */
async function burst(
  productToken: string,
  rounds: number,
  perRound: number,
  everyMs: number,
  onRound?: (i: number) => Promise<void>,
) {
  const tokens = await Promise.all(
    Array.from({ length: rounds * perRound }, (_, i) =>
      client.login(`burst-${i}-${Math.random().toString(36).slice(2, 6)}`),
    ),
  );
  const statuses: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const started = Date.now();
    const batch = tokens.slice(r * perRound, (r + 1) * perRound);
    statuses.push(...(await Promise.all(batch.map((t) => client.buy(productToken, t)))));
    await onRound?.(r);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, everyMs - (Date.now() - started))));
  }
  return statuses;
}

describe.skipIf(!hasChromium)(hasChromium ? "the operator page in Chromium" : SKIP_REASON, () => {
  beforeAll(async () => {
    site = await startSite({ vars: { DEV_LOGIN: "true" } });
    client = siteClient(site.url);
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1440, height: 1000 }, baseURL: site.url });
    errors = watchErrors(page);
    page.on("request", (r) => {
      const url = new URL(r.url());
      if (url.pathname.startsWith("/api/")) requests.push(`${r.method()} ${url.pathname}`);
    });
  });
  afterAll(async () => {
    await browser?.close();
    await site?.stop();
  });

  it("keeps the console behind the operator token", async () => {
    await page.goto("/admin");
    await page.fill("#admin-token", "not-the-token");
    await page.press("#admin-token", "Enter");
    await page.waitForSelector("#gate-error:text('not accepted')");
    await screenshot(page, "operator-gate-desktop");
    await page.fill("#admin-token", ADMIN_TOKEN);
    await page.press("#admin-token", "Enter");
    await page.waitForSelector("#console:not([hidden])");
    expect(await page.evaluate(() => sessionStorage.getItem("flashsale.adminToken"))).toBe(ADMIN_TOKEN);
  });

  it("shows the server's validation errors next to the fields", async () => {
    await page.fill("#f-stock", "-5");
    await page.click("#create-button");
    await page.waitForSelector("#e-name:text('Enter a name.')");
    expect(await text("#e-productId")).toBe("Enter a product id.");
    expect(await text("#e-priceCents")).toBe("Enter a price.");
    expect(await text("#e-stock")).toBe("The stock must be at least 0.");
    expect(await page.getAttribute("#f-stock", "aria-invalid")).toBe("true");
    expect(await text("#e-perUserLimit")).toBe("");
    await screenshot(page, "operator-form-errors-desktop");
  });

  it("creates a sale and watches its charts move while a scripted burst buys", async () => {
    await page.fill("#f-name", "Studio Hoodie");
    await page.fill("#f-productId", `hoodie-${Date.now()}`);
    await page.fill("#f-price", "79");
    await page.fill("#f-stock", "120");
    await page.click("#starts-now");
    await page.click("#create-button");
    await page.waitForSelector("#form-status:text('Created')");
    await page.waitForSelector("#live-name:text('Studio Hoodie')");
    const sale = (await client.adminSales()).sales.find((s) => s.name === "Studio Hoodie");
    if (!sale) throw new Error("the created sale is not listed");
    expect(sale.stock).toBe(120);
    await page.waitForFunction(() =>
      document.querySelector("#stock-chart svg")?.getAttribute("aria-label")?.includes("120 of 120"),
    );
    await page.waitForSelector("#live-status:text('Live now')");
    const beforeBurst = requests.length;

    let midBurst = 0;
    const statuses = await burst(sale.productToken, 6, 25, 900, async (round) => {
      if (round !== 2) return;
      await page.waitForTimeout(1100);
      midBurst = await remainingInChart();
      await screenshot(page, "operator-during-burst-desktop");
    });
    expect(statuses.filter((s) => s === 202)).toHaveLength(120);
    expect(statuses.filter((s) => s === 410)).toHaveLength(30);
    expect(midBurst).toBeLessThan(120);
    expect(midBurst).toBeGreaterThan(0);

    await page.waitForFunction(() =>
      document.querySelector("#stock-chart svg")?.getAttribute("aria-label")?.includes(": 0 of 120"),
    );
    await site.stack.qstash.idle(20_000);
    await page.waitForSelector("#k-awaiting:text('120')", { timeout: 10_000 });
    // 410s answered from an isolate's sold-out memory reach the timeline up to a second later (one write a
    // second per isolate), and the operator stream pushes the timeline at most once a second: wait for it
    await page
      .waitForFunction(
        () => document.querySelector('#outcome-legend [data-series="soldOut"] strong')?.textContent === "30",
        undefined,
        { timeout: 10_000 },
      )
      .catch(() => {});
    expect(await legendCount("reserved")).toBe(120);
    expect(await legendCount("soldOut")).toBe(30);
    expect(await page.locator("#outcome-chart rect").count()).toBeGreaterThan(3);
    expect(await text("#invariant")).toBe("Invariant holds");
    expect(await text("#k-remaining")).toBe("0 / 120");
    // every figure above was pushed: the stream was up, so the page polled none of them
    expect(requests).toContain(`GET /api/admin/sales/${sale.saleId}/events`);
    expect(figurePolls(requests.slice(beforeBurst))).toEqual([]);
    await screenshot(page, "operator-after-burst-desktop");
  });

  it("adjusts stock, pauses and resumes, and reconciles", async () => {
    await page.fill("#stock-delta", "10");
    await page.press("#stock-delta", "Enter");
    await page.waitForSelector("#k-remaining:text('10 / 130')");
    await page.fill("#stock-delta", "-50");
    await page.press("#stock-delta", "Enter");
    await page.waitForSelector("#stock-error:text('at most 10 can go')");

    await page.click("#pause-button");
    await page.waitForSelector("#live-status:text('Paused')");
    await page.click("#pause-button");
    await page.waitForSelector("#live-status:text('Live now')");

    await page.click("#reconcile-button");
    await page.waitForSelector("#reconcile-report h3");
    expect(await text("#reconcile-report .notice")).toBe("Redis and Postgres agree. Nothing to repair.");
    await screenshot(page, "operator-reconciled-desktop");
    await page.click("#dead-refresh");
    expect(await text("#dead-letters")).toContain("No dead letters");
  });

  it("adds a webhook endpoint, shows its secret once, sends a test event and removes it", async () => {
    const receiver = await startWebhookReceiver();
    try {
      await page.fill("#webhook-url", receiver.url);
      await page.press("#webhook-url", "Enter");
      await page.waitForSelector("#webhooks code:text('whsec_')");
      const secret = await text("#webhooks .notice code");
      expect(secret).toMatch(/^whsec_/);
      receiver.trust(secret);
      expect(await text("#webhooks tbody")).toContain(receiver.url);
      await page.click("#webhooks button:text('Test')");
      await page.waitForSelector("#webhook-error:text('Test event queued.')");
      const deadline = Date.now() + 20_000;
      while (Date.now() < deadline && receiver.accepted().length === 0)
        await new Promise((r) => setTimeout(r, 100));
      expect(receiver.accepted().map((d) => d.payload.type)).toContain("webhook.test");
      await page.click("#webhooks button:text('Remove')");
      await page.waitForSelector("#webhook-error:text('Removed.')");
      await page.waitForSelector("#webhooks p.muted:text('No endpoints')");
    } finally {
      await receiver.close();
    }
  });

  it("says what breaks the invariant: a user over the limit in Redis (a late write after a Redis loss)", async () => {
    const token = await text("#live-token");
    const redis = new Redis(site.stack.redis.url, { maxRetriesPerRequest: 1 });
    try {
      const sale = (await client.adminSales()).sales.find((s) => s.productToken === token);
      if (!sale) throw new Error("the watched sale is not listed");
      const holdings = saleKeys(sale.saleId).holdings;
      await redis.hincrby(holdings, "late-writer", 3);
      await page.waitForSelector("#invariant:text('Invariant broken')");
      expect(await text("#invariant-breaks")).toContain("1 user(s) over the limit");
      await redis.hdel(holdings, "late-writer");
      await page.waitForSelector("#invariant:text('Invariant holds')");
      expect(await page.isHidden("#invariant-breaks")).toBe(true);
    } finally {
      redis.disconnect();
    }
  });

  it("polls the figures while the operator stream is cut, and stops once it is back", async () => {
    const token = await text("#live-token");
    const sale = (await client.adminSales()).sales.find((s) => s.productToken === token);
    if (!sale) throw new Error("the watched sale is not listed");
    await page.route("**/api/admin/sales/*/events", (route) => route.abort());
    await page.reload();
    await page.click(`button.sale-row[data-sale-id="${sale.saleId}"]`);
    const since = requests.length;
    await page.waitForFunction(() => document.querySelector("#k-remaining")?.textContent?.includes("/ 130"));
    const before = Number((await text("#k-remaining")).split(" / ")[0]);
    expect(await client.buy(sale.productToken, await client.login(`cut-${Date.now()}`))).toBe(202);
    await page.waitForSelector(`#k-remaining:text('${before - 1} / 130')`, { timeout: 10_000 });
    expect(figurePolls(requests.slice(since)).length).toBeGreaterThan(1);

    await page.unroute("**/api/admin/sales/*/events");
    // the stream is tried again with a growing delay (3 s, 6 s, …); once it is up, the polling stops
    const deadline = Date.now() + 45_000;
    let quiet = false;
    while (!quiet && Date.now() < deadline) {
      const mark = requests.length;
      await page.waitForTimeout(2500);
      quiet = figurePolls(requests.slice(mark)).length === 0;
    }
    expect(quiet).toBe(true);
    expect(await client.buy(sale.productToken, await client.login(`back-${Date.now()}`))).toBe(202);
    await page.waitForSelector(`#k-remaining:text('${before - 2} / 130')`, { timeout: 10_000 });
  });

  it("works on a phone", async () => {
    await page.setViewportSize(PHONE);
    await page.waitForTimeout(1200);
    await screenshot(page, "operator-phone");
    await page.setViewportSize(DESKTOP);
    expect(errors).toEqual([]);
  });
});

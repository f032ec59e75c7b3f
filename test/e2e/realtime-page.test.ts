import type { Browser, BrowserContext, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { DESKTOP, hasChromium, SKIP_REASON, watchErrors } from "../support/browser";
import { browserSiteForDescribe, shopperContext } from "../support/browser-site";
import type { SiteClient } from "../support/site-client";
import type { Site } from "../support/site-worker";

let site: Site;
let client: SiteClient;
let browser: Browser;
const contexts: BrowserContext[] = [];
const pageErrors: string[][] = [];

/** A page in a fresh profile (signed in as `userId` when given) and the API requests it makes. */
async function shopperPage(userId?: string): Promise<{ page: Page; requests: string[] }> {
  const context = await shopperContext({ site, client, browser }, contexts, DESKTOP, userId);
  const page = await context.newPage();
  pageErrors.push(watchErrors(page));
  const requests: string[] = [];
  page.on("request", (r) => {
    const url = new URL(r.url());
    if (url.pathname.startsWith("/api/")) requests.push(`${r.method()} ${url.pathname}`);
  });
  return { page, requests };
}

const remainingOf = async (page: Page) => (await page.textContent("#sale-remaining"))?.trim() ?? "";
const polls = (requests: string[], saleId: string) =>
  requests.filter((r) => r === `GET /api/sales/${saleId}` || r === "GET /api/sales");

describe.skipIf(!hasChromium)(hasChromium ? "realtime pages in Chromium" : SKIP_REASON, () => {
  browserSiteForDescribe({ DEV_LOGIN: "true" }, contexts, (s) => {
    ({ site, client, browser } = s);
  });

  it("pushes a buy in one page to the other within a second, and the order's progress, without polling", async () => {
    const sale = await client.createSale({ name: "Pushed Sneakers", stock: 20, perUserLimit: 2 });
    const buyer = await shopperPage("rt-buyer");
    const watcher = await shopperPage();
    for (const { page } of [buyer, watcher]) {
      const streamed = page.waitForResponse((r) => r.url().endsWith(`/api/sales/${sale.saleId}/events`));
      await page.goto(`/?sale=${sale.saleId}`);
      await streamed;
      await page.waitForFunction(() =>
        document.querySelector("#sale-remaining")?.textContent?.startsWith("20"),
      );
    }
    await buyer.page.waitForSelector("#buy-button:not([disabled])");
    await watcher.page.waitForTimeout(3500); // longer than the page's polling interval (3 s)
    const before = { buyer: buyer.requests.length, watcher: watcher.requests.length };

    const answered = buyer.page.waitForResponse((r) => r.url().includes("/api/buy/"));
    await buyer.page.click("#buy-button");
    expect((await answered).status()).toBe(202);
    await watcher.page.waitForFunction(
      () => document.querySelector("#sale-remaining")?.textContent?.startsWith("19"),
      undefined,
      { timeout: 1000 },
    );
    await buyer.page.waitForSelector('#order-panel[data-status="awaiting_payment"]', { timeout: 20_000 });
    expect(await remainingOf(watcher.page)).toMatch(/^19 of 20/);

    expect(polls(watcher.requests.slice(before.watcher), sale.saleId)).toEqual([]);
    expect(polls(buyer.requests.slice(before.buyer), sale.saleId)).toEqual([]);
    const orderCalls = buyer.requests.slice(before.buyer).filter((r) => r.includes("/api/orders/"));
    expect(orderCalls.length).toBeGreaterThan(0);
    expect(orderCalls.every((r) => r.endsWith("/events"))).toBe(true);
    for (const errors of pageErrors) expect(errors).toEqual([]);
  });

  it("falls back to polling while the stream is cut, and still shows the change", async () => {
    const sale = await client.createSale({ name: "Cut-off Hoodie", stock: 10, perUserLimit: 2 });
    const { page, requests } = await shopperPage();
    await page.route("**/api/sales/*/events", (route) => route.abort());
    await page.goto(`/?sale=${sale.saleId}`);
    await page.waitForFunction(() =>
      document.querySelector("#sale-remaining")?.textContent?.startsWith("10"),
    );
    expect(await client.buy(sale.productToken, await client.login("rt-other"), 2)).toBe(202);
    await page.waitForFunction(
      () => document.querySelector("#sale-remaining")?.textContent?.startsWith("8"),
      undefined,
      { timeout: 10_000 },
    );
    expect(polls(requests, sale.saleId).length).toBeGreaterThan(1);

    await page.unroute("**/api/sales/*/events");
    const streamed = page.waitForResponse((r) => r.url().endsWith("/events"), { timeout: 15_000 });
    await streamed;
    await page.waitForTimeout(500);
    const since = requests.length;
    await page.waitForTimeout(3500);
    expect(polls(requests.slice(since), sale.saleId)).toEqual([]);
  });
});

import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DESKTOP, hasChromium, launchBrowser, SKIP_REASON, watchErrors } from "../support/browser";
import { type SiteClient, siteClient } from "../support/site-client";
import { type Site, startSite } from "../support/site-worker";

let site: Site;
let client: SiteClient;
let browser: Browser;
let context: BrowserContext;

/** The "N of M left" line of a sale's card on the list page. */
const cardLine = (page: Page, saleId: string) =>
  page.locator(`[data-sale-id="${saleId}"] .muted`).textContent({ timeout: 5000 });

/** Waits until the sale's card says `n` left; returns how long that took. */
async function cardSays(page: Page, saleId: string, n: number, timeout: number): Promise<number> {
  const at = Date.now();
  await page.waitForFunction(
    ([id, left]) =>
      document.querySelector(`[data-sale-id="${id}"] .muted`)?.textContent?.startsWith(`${left} of`) === true,
    [saleId, n] as const,
    { timeout },
  );
  return Date.now() - at;
}

describe.skipIf(!hasChromium)(hasChromium ? "the sale list page in Chromium" : SKIP_REASON, () => {
  beforeAll(async () => {
    site = await startSite({ vars: { DEV_LOGIN: "true", RATE_LIMIT_USER_PER_WINDOW: "1000" } });
    client = siteClient(site.url);
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: DESKTOP, baseURL: site.url });
  });
  afterAll(async () => {
    await context?.close().catch(() => {});
    await browser?.close();
    await site?.stop();
  });

  it("shows each buy's new count within a second, pushed over the list stream, without polling", async () => {
    const sale = await client.createSale({ name: "Listed Jacket", stock: 30, perUserLimit: 2 });
    const page = await context.newPage();
    const errors = watchErrors(page);
    const requests: string[] = [];
    page.on("request", (r) => {
      const url = new URL(r.url());
      if (url.pathname.startsWith("/api/")) requests.push(`${r.method()} ${url.pathname}`);
    });
    const streamed = page.waitForResponse((r) => r.url().endsWith("/api/sales/events"), { timeout: 10_000 });
    await page.goto("/");
    await streamed;
    await cardSays(page, sale.saleId, 30, 5000);
    await page.waitForTimeout(500);
    const since = requests.length;

    const pushedWithinMs: number[] = [];
    for (const [i, left] of [28, 26, 24].entries()) {
      expect(await client.buy(sale.productToken, await client.login(`list-${i}`), 2)).toBe(202);
      pushedWithinMs.push(await cardSays(page, sale.saleId, left, 5000));
      await page.waitForTimeout(1500);
    }
    console.log(`list page: each buy shown after ${pushedWithinMs.join(", ")} ms`);
    for (const ms of pushedWithinMs) expect(ms).toBeLessThan(1000);
    expect(await cardLine(page, sale.saleId)).toMatch(/^24 of 30 left/);
    // the stream carried every change: the page did not poll the list meanwhile (it polls every 5 s)
    await page.waitForTimeout(1500);
    expect(requests.slice(since).filter((r) => r === "GET /api/sales")).toEqual([]);

    // a sale created while the page is open appears without a reload
    const added = await client.createSale({ name: "Late Drop Cap", stock: 7 });
    await cardSays(page, added.saleId, 7, 3000);
    expect(errors).toEqual([]);
  });
});

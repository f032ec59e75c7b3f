import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DESKTOP,
  hasChromium,
  launchBrowser,
  PHONE,
  SKIP_REASON,
  screenshot,
  watchErrors,
} from "../support/browser";
import { type SiteClient, siteClient } from "../support/site-client";
import { type Site, startSite } from "../support/site-worker";

let site: Site;
let client: SiteClient;
let browser: Browser;
const contexts: BrowserContext[] = [];
const pageErrors: string[][] = [];

/** A page in a fresh browser profile, signed in as `userId` when given (through the dev login). */
async function shopperPage(viewport: typeof DESKTOP, userId?: string): Promise<Page> {
  const context = await browser.newContext({ viewport, baseURL: site.url });
  contexts.push(context);
  if (userId) {
    const token = await client.login(userId);
    await context.addInitScript(
      ([t, u]) =>
        localStorage.setItem("flashsale.shopper", JSON.stringify({ userId: u, token: t, expiresAt: null })),
      [token, userId],
    );
  }
  const page = await context.newPage();
  pageErrors.push(watchErrors(page));
  return page;
}

const text = async (page: Page, selector: string) => ((await page.textContent(selector)) ?? "").trim();

describe.skipIf(!hasChromium)(hasChromium ? "the shopper page in Chromium" : SKIP_REASON, () => {
  beforeAll(async () => {
    site = await startSite({ vars: { DEV_LOGIN: "true" } });
    client = siteClient(site.url);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => {});
    await browser?.close();
    await site?.stop();
  });

  it("signs in, buys, watches queued turn into awaiting payment, pays and sees paid", async () => {
    const sale = await client.createSale({ name: "Aero Runner Sneakers", stock: 40, perUserLimit: 2 });
    await client.createSale({
      name: "Midnight Chronograph",
      priceCents: 34900,
      startsAt: new Date(Date.now() + 900_000).toISOString(),
    });
    const page = await shopperPage(DESKTOP);
    await page.goto("/");
    const card = page.locator(`a[data-sale-id="${sale.saleId}"]`);
    await card.waitFor();
    await screenshot(page, "shop-list-desktop");

    await card.click();
    await page.waitForSelector("#buy-button:not([disabled])");
    expect(await text(page, "#buy-label")).toBe("Sign in to buy");
    expect(await text(page, "#sale-price")).toBe("$129.00");
    expect(await text(page, "#sale-limit")).toBe("2 each");
    await page.click("#buy-button");
    await page.fill("#user-id", "alice");
    await screenshot(page, "shop-signin-desktop");
    await page.press("#user-id", "Enter");
    await page.waitForSelector("#account-name:text('alice')");
    await page.waitForFunction(() =>
      document.querySelector("#buy-label")?.textContent?.startsWith("Buy now"),
    );
    await screenshot(page, "shop-live-desktop");

    site.stack.qstash.pause();
    await page.click("#buy-button");
    await page.waitForSelector('#order-panel[data-status="queued"]');
    expect(await text(page, "#order-title")).toContain("confirming");
    expect(await page.isDisabled("#pay-button")).toBe(true);
    await screenshot(page, "shop-queued-desktop");
    site.stack.qstash.resume();

    await page.waitForSelector('#order-panel[data-status="awaiting_payment"]', { timeout: 20_000 });
    await page.waitForSelector("#pay-button:not([disabled])");
    expect(await text(page, "#deadline")).toMatch(/^Time left to pay (9:5\d|10:00)$/);
    await screenshot(page, "shop-awaiting-desktop");

    await page.click("#pay-button");
    await page.waitForSelector('#order-panel[data-status="paid"]', { timeout: 15_000 });
    expect(await text(page, "#order-title")).toBe("Paid. It's yours!");
    await screenshot(page, "shop-paid-desktop");
    const stats = await client.stats(sale.saleId);
    expect([stats.paid, stats.remaining]).toEqual([1, 39]);
  });

  it("tells another shopper the sale is sold out, on a phone", async () => {
    const sale = await client.createSale({
      name: "Limited Tour Tee",
      priceCents: 3500,
      stock: 1,
      perUserLimit: 1,
    });
    const page = await shopperPage(PHONE, "bob");
    await page.goto("/");
    await page.locator(`a[data-sale-id="${sale.saleId}"]`).waitFor();
    await screenshot(page, "shop-list-phone");
    await page.goto(`/?sale=${sale.saleId}`);
    await page.waitForSelector("#buy-button:not([disabled])");
    await screenshot(page, "shop-live-phone");

    // Bob's page keeps showing the sale as live (no refresh gets through) while someone else buys the last unit.
    await page.route("**/api/sales/**", (route) => route.abort());
    expect(await client.buy(sale.productToken, await client.login("early-bird"))).toBe(202);
    await page.click("#buy-button");
    await page.waitForSelector("#message:text('Sold out')");
    expect(await text(page, "#message")).toBe("Sold out. Every unit has been claimed.");
    await screenshot(page, "shop-sold-out-message-phone");

    await page.unroute("**/api/sales/**");
    await page.waitForSelector("#buy-label:text('Sold out')", { timeout: 10_000 });
    expect(await page.isDisabled("#buy-button")).toBe(true);
    expect(await text(page, "#timer-label")).toBe("Sold out");
    await screenshot(page, "shop-sold-out-phone");
  });

  it("reserves once on a double click, and shows the order on a phone", async () => {
    const sale = await client.createSale({
      name: "Studio Hoodie",
      priceCents: 7900,
      stock: 10,
      perUserLimit: 5,
    });
    const page = await shopperPage(PHONE, "carol");
    await page.goto(`/?sale=${sale.saleId}`);
    await page.waitForSelector("#buy-button:not([disabled])");
    await page.dblclick("#buy-button");
    await page.waitForSelector('#order-panel[data-status="awaiting_payment"]', { timeout: 20_000 });
    await page.waitForTimeout(1000);
    const stats = await client.stats(sale.saleId);
    expect(stats.queued + stats.awaitingPayment + stats.paid).toBe(1);
    expect(stats.remaining).toBe(9);
    await page.waitForSelector("#pay-button:not([disabled])");
    await screenshot(page, "shop-awaiting-phone");

    await page.click("#cancel-button");
    await page.waitForSelector('#order-panel[data-status="cancelled"]');
    await screenshot(page, "shop-cancelled-phone");
    expect((await client.stats(sale.saleId)).remaining).toBe(10);
  });

  it("opens the buy button at the start time although the visitor's clock is 47 minutes slow", async () => {
    const startsAt = Date.now() + 6000;
    const sale = await client.createSale({
      name: "Midnight Chronograph",
      priceCents: 34900,
      perUserLimit: 1,
      startsAt: new Date(startsAt).toISOString(),
    });
    const page = await shopperPage(DESKTOP, "dave");
    await page.clock.setSystemTime(new Date(Date.now() - 47 * 60_000));
    await page.goto(`/?sale=${sale.saleId}`);
    expect(await page.evaluate(() => Date.now())).toBeLessThan(Date.now() - 46 * 60_000);
    await page.waitForSelector("#timer[data-status='upcoming']");
    expect(await text(page, "#timer-label")).toBe("Opens in");
    expect(await text(page, "#timer-value")).toMatch(/^0:0[3-6]$/);
    expect(await page.isDisabled("#buy-button")).toBe(true);
    expect(await text(page, "#buy-label")).toMatch(/^Opens /);
    await screenshot(page, "shop-countdown-desktop");

    await page.waitForSelector("#buy-button:not([disabled])", { timeout: 15_000 });
    const openedAt = Date.now();
    expect(openedAt).toBeGreaterThanOrEqual(startsAt - 250);
    expect(openedAt).toBeLessThan(startsAt + 2500);
    await page.click("#buy-button");
    await page.waitForSelector("#order-panel[data-status]");
    expect(pageErrors.flat()).toEqual([]);
  });
});

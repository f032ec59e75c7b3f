import type { Browser, BrowserContext, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { DESKTOP, hasChromium, PHONE, SKIP_REASON, screenshot, watchErrors } from "../support/browser";
import { browserSiteForDescribe, shopperContext } from "../support/browser-site";
import type { SiteClient } from "../support/site-client";
import type { Site } from "../support/site-worker";

let site: Site;
let client: SiteClient;
let browser: Browser;
const contexts: BrowserContext[] = [];
const pageErrors: string[][] = [];

/** A page in a fresh browser profile, signed in as `userId` when given (through the dev login). */
async function shopperPage(viewport: typeof DESKTOP, userId?: string): Promise<Page> {
  const context = await shopperContext({ site, client, browser }, contexts, viewport, userId);
  const page = await context.newPage();
  pageErrors.push(watchErrors(page));
  return page;
}

/** Every error code of the contract a shopper's page can receive, plus a lost connection. */
const SHOPPER_ERROR_CODES = [
  "INVALID_REQUEST",
  "UNAUTHENTICATED",
  "UNKNOWN_PRODUCT",
  "UNKNOWN_SALE",
  "UNKNOWN_ORDER",
  "SALE_NOT_STARTED",
  "SALE_ENDED",
  "SALE_PAUSED",
  "ALREADY_PURCHASED",
  "LIMIT_EXCEEDED",
  "INSUFFICIENT_STOCK",
  "SOLD_OUT",
  "RATE_LIMITED",
  "UNAVAILABLE",
  "ORDER_EXPIRED",
  "ORDER_CANCELLED",
  "ORDER_PAID",
  "ORDER_NOT_READY",
  "NETWORK",
];

const text = async (page: Page, selector: string) => ((await page.textContent(selector)) ?? "").trim();

describe.skipIf(!hasChromium)(hasChromium ? "the shopper page in Chromium" : SKIP_REASON, () => {
  browserSiteForDescribe({ DEV_LOGIN: "true" }, contexts, (s) => {
    ({ site, client, browser } = s);
  });

  it("signs in, buys, watches queued turn into awaiting payment, pays and sees paid", async () => {
    const sale = await client.createSale({ name: "Aero Runner Sneakers", stock: 40, perUserLimit: 2 });
    await client.createSale({
      name: "Midnight Chronograph",
      priceCents: 34900,
      startsAt: new Date(Date.now() + 900_000).toISOString(),
    });
    const page = await shopperPage(DESKTOP);
    const response = await page.goto("/");
    expect(response?.headers()["content-security-policy"]).toContain("script-src 'self'");
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
    // Bob's pushed updates are cut (his page polls), so his click can still meet the sold-out answer.
    await page.route("**/api/sales/*/events", (route) => route.abort());
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

  it("retries a lost response and a 429 with the same Idempotency-Key, and reserves once", async () => {
    const sale = await client.createSale({
      name: "Studio Hoodie",
      priceCents: 7900,
      stock: 10,
      perUserLimit: 5,
    });
    const page = await shopperPage(DESKTOP, "erin");
    const keys: string[] = [];
    await page.route("**/api/buy/**", async (route) => {
      keys.push(route.request().headers()["idempotency-key"] ?? "");
      if (keys.length === 1) {
        await route.fetch();
        await route.abort("connectionreset");
      } else if (keys.length === 2) {
        await route.fulfill({
          status: 429,
          headers: { "Retry-After": "2", "Content-Type": "application/json" },
          body: JSON.stringify({
            error: { code: "RATE_LIMITED", message: "Too many attempts.", retryAfterSeconds: 2 },
          }),
        });
      } else {
        await route.continue();
      }
    });
    await page.goto(`/?sale=${sale.saleId}`);
    await page.waitForSelector("#buy-button:not([disabled])");
    await page.click("#buy-button");
    await page.waitForSelector("#message:text('Too many attempts')");
    expect(await text(page, "#message")).toBe("Too many attempts. Please wait 2 seconds and try again.");
    expect(await text(page, "#buy-label")).toBe("Reserving…");
    await screenshot(page, "shop-rate-limited-desktop");
    await page.waitForSelector("#order-panel[data-status]", { timeout: 10_000 });
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(1);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    const stats = await client.stats(sale.saleId);
    expect(stats.queued + stats.awaitingPayment).toBe(1);
    expect(stats.remaining).toBe(9);
  });

  it("shows an unpaid order as expired once the payment window has run out", async () => {
    const sale = await client.createSale({
      name: "Limited Tour Tee",
      priceCents: 3500,
      paymentWindowSeconds: 2,
    });
    const page = await shopperPage(DESKTOP, "frank");
    await page.goto(`/?sale=${sale.saleId}`);
    await page.waitForSelector("#buy-button:not([disabled])");
    await page.click("#buy-button");
    await page.waitForSelector('#order-panel[data-status="awaiting_payment"]', { timeout: 20_000 });
    await page.waitForSelector('#order-panel[data-status="expired"]', { timeout: 40_000 });
    expect(await text(page, "#order-title")).toBe("Expired");
    expect(await text(page, "#order-detail")).toBe("The time to pay ran out, so the item went back on sale.");
    await screenshot(page, "shop-expired-desktop");
  });

  it("has a distinct, plain message for every error code a shopper can meet", async () => {
    const page = await shopperPage(DESKTOP);
    await page.goto("/");
    // A string, so that the test runner's bundler leaves the browser's import() alone.
    const messages = (await page.evaluate(`(async () => {
      const { shopperMessage } = await import("/assets/messages.js");
      const codes = ${JSON.stringify(SHOPPER_ERROR_CODES)};
      const extra = { remaining: 2, mayStillBuy: 1 };
      return {
        fallback: shopperMessage({ code: "SOMETHING_ELSE" }),
        byCode: Object.fromEntries(codes.map((code) => [code, shopperMessage({ code, ...extra }, { retryAfter: 3 })])),
      };
    })()`)) as { fallback: string; byCode: Record<string, string> };
    const texts = Object.values(messages.byCode);
    expect(new Set(texts).size).toBe(texts.length);
    expect(texts).not.toContain(messages.fallback);
    expect(messages.byCode.RATE_LIMITED).toBe("Too many attempts. Please wait 3 seconds and try again.");
    expect(messages.byCode.UNAVAILABLE).toContain("Try again in 3 seconds");
    expect(messages.byCode.INSUFFICIENT_STOCK).toContain("Only 2 units left");
    expect(messages.byCode.LIMIT_EXCEEDED).toContain("1 unit more");
  });

  it("works with the keyboard alone, and moves focus to the order", async () => {
    const sale = await client.createSale({ name: "Keyboard Edition", priceCents: 2500 });
    const page = await shopperPage(DESKTOP, "grace");
    await page.goto("/");
    await page.locator(`a[data-sale-id="${sale.saleId}"]`).waitFor();
    const focused = () =>
      page.evaluate(
        () => document.activeElement?.id || document.activeElement?.getAttribute("data-sale-id") || "",
      );
    const tabTo = async (target: string) => {
      for (let i = 0; i < 25 && (await focused()) !== target; i++) await page.keyboard.press("Tab");
      expect(await focused()).toBe(target);
    };
    await tabTo(sale.saleId);
    await page.keyboard.press("Enter");
    await page.waitForSelector("#buy-button:not([disabled])");
    await tabTo("qty-inc");
    await page.keyboard.press("Enter");
    expect(await page.inputValue("#qty-input")).toBe("2");
    await tabTo("buy-button");
    await page.keyboard.press("Enter");
    await page.waitForSelector('#order-panel[data-status="awaiting_payment"]', { timeout: 20_000 });
    expect(await focused()).toBe("order-title");
    await page.waitForSelector("#pay-button:not([disabled])");
    await page.keyboard.press("Tab");
    expect(await focused()).toBe("pay-button");
    await page.keyboard.press("Enter");
    await page.waitForSelector('#order-panel[data-status="paid"]');
    expect(await text(page, "#receipt-qty")).toBe("2");
  });

  it("takes the shop's token handed over in the URL or pasted in the sign-in dialog", async () => {
    const handed = await shopperPage(PHONE);
    await handed.goto(`/#token=${await client.login("heidi")}`);
    await handed.waitForSelector("#account-name:text('heidi')");
    expect(new URL(handed.url()).hash).toBe("");

    const pasted = await shopperPage(DESKTOP);
    await pasted.goto("/");
    await pasted.click("#signin-open");
    await pasted.click("#token-details summary");
    await pasted.fill("#token-input", "not a token");
    await pasted.click("#token-signin button[type=submit]");
    expect(await text(pasted, "#signin-error")).toContain("not a sign-in token");
    await pasted.fill("#token-input", await client.login("ivan"));
    await screenshot(pasted, "shop-paste-token-desktop");
    await pasted.click("#token-signin button[type=submit]");
    await pasted.waitForSelector("#account-name:text('ivan')");
  });

  it("asks before a #token= link replaces a different signed-in shopper; declining keeps them, accepting switches", async () => {
    const page = await shopperPage(DESKTOP, "judy");
    const saved = () => page.evaluate(() => JSON.parse(localStorage.getItem("flashsale.shopper") ?? "null"));
    await page.goto(`/#token=${await client.login("mallory")}`);
    await page.waitForSelector("#switch-dialog[open]");
    expect(await text(page, "#switch-current")).toBe("judy");
    expect(await text(page, "#switch-next")).toBe("mallory");
    expect(await text(page, "#account-name")).toBe("judy");
    expect((await saved()).userId).toBe("judy");
    expect(new URL(page.url()).hash).toBe("");
    await screenshot(page, "shop-switch-identity-desktop");
    await page.click("#switch-keep");
    await page.waitForSelector("#switch-dialog", { state: "hidden" });
    expect(await text(page, "#account-name")).toBe("judy");
    expect((await saved()).userId).toBe("judy");

    // a new query string makes each link a fresh page load, as a link followed from elsewhere is
    await page.goto(`/?again=1#token=${await client.login("mallory")}`);
    await page.waitForSelector("#switch-dialog[open]");
    await page.keyboard.press("Escape");
    await page.waitForSelector("#switch-dialog", { state: "hidden" });
    expect((await saved()).userId).toBe("judy");

    await page.goto(`/?again=2#token=${await client.login("mallory")}`);
    await page.waitForSelector("#switch-dialog[open]");
    await page.click("#switch-accept");
    await page.waitForSelector("#account-name:text('mallory')");
    expect((await saved()).userId).toBe("mallory");
  });

  it("takes a #token= link for the shopper already signed in without asking", async () => {
    const page = await shopperPage(PHONE, "kim");
    const fresh = await client.login("kim");
    await page.goto(`/#token=${fresh}`);
    await page.waitForSelector("#account-name:text('kim')");
    await page.waitForFunction(
      (t) => JSON.parse(localStorage.getItem("flashsale.shopper") ?? "null")?.token === t,
      fresh,
    );
    expect(await page.isVisible("#switch-dialog")).toBe(false);
    expect(new URL(page.url()).hash).toBe("");
  });

  // The page must see the sale `upcoming` before it opens. How long a fresh profile takes to show a sale
  // depends on the machine's load (over 10 s has been seen in CI after the file's other tests), so the
  // test first times the same profile on another upcoming sale and opens this one well after that.
  it("opens the buy button at the start time although the visitor's clock is 47 minutes slow", async () => {
    const page = await shopperPage(DESKTOP, "dave");
    await page.clock.setSystemTime(new Date(Date.now() - 47 * 60_000));
    const warmUp = await client.createSale({
      name: "Midnight Chronograph",
      startsAt: new Date(Date.now() + 3_600_000).toISOString(),
      endsAt: new Date(Date.now() + 7_200_000).toISOString(),
    });
    const warmUpFrom = Date.now();
    await page.goto(`/?sale=${warmUp.saleId}`);
    await page.waitForSelector("#timer[data-status='upcoming']");
    const warmUpMs = Date.now() - warmUpFrom;
    const marginMs = Math.max(10_000, 3 * warmUpMs + 2_000);

    const startsAt = Date.now() + marginMs;
    const sale = await client.createSale({
      name: "Midnight Chronograph",
      priceCents: 34900,
      perUserLimit: 1,
      startsAt: new Date(startsAt).toISOString(),
    });
    await page.goto(`/?sale=${sale.saleId}`);
    expect(await page.evaluate(() => Date.now())).toBeLessThan(Date.now() - 46 * 60_000);
    await page.waitForSelector("#timer[data-status='upcoming']");
    expect(await text(page, "#timer-label")).toBe("Opens in");
    const [minutes, seconds] = (await text(page, "#timer-value")).split(":").map(Number);
    const shownSeconds = (minutes ?? Number.NaN) * 60 + (seconds ?? Number.NaN);
    expect(shownSeconds).toBeGreaterThan(0);
    expect(shownSeconds).toBeLessThanOrEqual(Math.ceil(marginMs / 1000));
    expect(await page.isDisabled("#buy-button")).toBe(true);
    expect(await text(page, "#buy-label")).toMatch(/^Opens /);
    await screenshot(page, "shop-countdown-desktop");

    await page.waitForSelector("#buy-button:not([disabled])", { timeout: marginMs + 5_000 });
    const openedAt = Date.now();
    expect(openedAt).toBeGreaterThanOrEqual(startsAt - 250);
    // Late by no more than the machine's own pace (a loaded CI machine's browser timers have run 3.8 s
    // late); a page that trusted the visitor's clock would open 47 minutes late.
    expect(openedAt).toBeLessThan(startsAt + Math.max(5_000, warmUpMs));
    await screenshot(page, "shop-opened-desktop");
    await page.click("#buy-button");
    await page.waitForSelector("#order-panel[data-status]");
    expect(pageErrors.flat()).toEqual([]);
  }, 180_000);
});

import type { Browser, BrowserContext, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { createDemoSale } from "../../local/dev-demo";
import { startWebhookReceiver as startDevReceiver } from "../../local/webhook-receiver";
import { DESKTOP, hasChromium, SKIP_REASON, screenshot, watchErrors } from "../support/browser";
import { browserSiteForDescribe, shopperContext } from "../support/browser-site";
import { ADMIN_TOKEN, type SiteClient } from "../support/site-client";
import type { Site } from "../support/site-worker";

let site: Site;
let client: SiteClient;
let browser: Browser;
const contexts: BrowserContext[] = [];

/** A signed-in shopper on the sale's page, its reservation made and the Pay button ready. */
async function reserved(saleId: string, userId: string): Promise<Page> {
  const context = await shopperContext({ site, client, browser }, contexts, DESKTOP, userId);
  const page = await context.newPage();
  watchErrors(page);
  await page.goto(`/?sale=${saleId}`);
  await page.waitForFunction(() => document.querySelector("#buy-label")?.textContent?.startsWith("Buy now"));
  await page.click("#buy-button");
  await page.waitForSelector("#pay-button:not([disabled])", { timeout: 30_000 });
  return page;
}

describe.skipIf(!hasChromium)(
  hasChromium ? "paying on the checkout page (Stripe stand-in)" : SKIP_REASON,
  () => {
    browserSiteForDescribe(
      { DEV_LOGIN: "true" },
      contexts,
      (s) => {
        ({ site, client, browser } = s);
      },
      { stripe: true },
    );

    it("buys, is sent to the checkout page, pays there and sees paid back on the shopper page", async () => {
      const sale = await client.createSale({ name: "Checkout Sneakers", stock: 5, perUserLimit: 1 });
      const page = await reserved(sale.saleId, "carol");
      const stripeUrl = site.stack.stripe?.url as string;
      await Promise.all([page.waitForURL(`${stripeUrl}/c/pay/**`), page.click("#pay-button")]);
      expect(await page.textContent("#amount")).toContain("USD");
      await screenshot(page, "checkout-page");
      await Promise.all([page.waitForURL(`${site.url}/**`), page.click("#pay")]);
      await page.waitForSelector('#order-panel[data-status="paid"]', { timeout: 30_000 });
      await screenshot(page, "checkout-paid");
    });

    it("Cancel on the checkout page goes back with the order still awaiting payment", async () => {
      const sale = await client.createSale({ name: "Checkout Watch", stock: 5, perUserLimit: 1 });
      const page = await reserved(sale.saleId, "dave");
      const stripeUrl = site.stack.stripe?.url as string;
      await Promise.all([page.waitForURL(`${stripeUrl}/c/pay/**`), page.click("#pay-button")]);
      await Promise.all([page.waitForURL(`${site.url}/**`), page.click("#cancel")]);
      await page.waitForSelector('#order-panel[data-status="awaiting_payment"]', { timeout: 30_000 });
      await page.waitForSelector("#pay-button:not([disabled])");
      const sessions = site.stack.stripe?.sessions() ?? [];
      expect(sessions.filter((s) => s.status === "open")).toHaveLength(1);
    });

    it("buys two sizes of the demo drop in one cart, pays them on the checkout page, and the shop's receiver prints order.paid with both lines", async () => {
      // the drop `npm run dev` creates, and the receiver it registers (it verifies and prints each event)
      const printed: string[] = [];
      const receiver = await startDevReceiver(site.url, ADMIN_TOKEN, {
        port: 0,
        log: (l) => printed.push(l),
      });
      try {
        const sale = await createDemoSale(site.url, ADMIN_TOKEN);
        const context = await shopperContext({ site, client, browser }, contexts, DESKTOP, "erin");
        const page = await context.newPage();
        watchErrors(page);
        await page.goto(`/?sale=${sale.saleId}`);
        await page.waitForSelector("#variant-picker:not([hidden])");
        await page.click('#variant-options button[data-variant-id="42"]');
        await page.click('#variant-options button[data-variant-id="43"]');
        await page.waitForSelector("#buy-label:text('Buy now · $258.00')");
        await page.click("#buy-button");
        await page.waitForSelector("#pay-button:not([disabled])", { timeout: 30_000 });
        const stripeUrl = site.stack.stripe?.url as string;
        await Promise.all([page.waitForURL(`${stripeUrl}/c/pay/**`), page.click("#pay-button")]);
        expect(await page.textContent("#amount")).toContain("258.00");
        expect(await page.locator("#lines li").allTextContents()).toEqual([
          "Aero Runner sneakers — drop: EU 42 × 1: 129.00 USD",
          "Aero Runner sneakers — drop: EU 43 × 1: 129.00 USD",
        ]);
        await screenshot(page, "checkout-page-cart");
        await Promise.all([page.waitForURL(`${site.url}/**`), page.click("#pay")]);
        await page.waitForSelector('#order-panel[data-status="paid"]', { timeout: 30_000 });
        const deadline = Date.now() + 30_000;
        const paid = () => printed.find((l) => l.startsWith("[webhook] order.paid "));
        while (Date.now() < deadline && !paid()) await new Promise((r) => setTimeout(r, 200));
        expect(paid()).toMatch(/^\[webhook\] order\.paid \S+ paid v\d+: EU 42 × 1, EU 43 × 1 \(\$258\.00\)$/);
        expect(printed.filter((l) => l.includes("did not verify"))).toEqual([]);
      } finally {
        await receiver.close();
      }
    });
  },
);

import type { Browser, BrowserContext, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { DESKTOP, hasChromium, SKIP_REASON, screenshot, watchErrors } from "../support/browser";
import { browserSiteForDescribe, shopperContext } from "../support/browser-site";
import { checkedFetch } from "../support/openapi-check";
import { ADMIN_TOKEN, type SaleBody, type SiteClient } from "../support/site-client";
import type { Site } from "../support/site-worker";

let site: Site;
let client: SiteClient;
let browser: Browser;
const contexts: BrowserContext[] = [];
const pageErrors: string[][] = [];

type Variant = { variantId: string; name: string; priceCents: number; stock: number; perUserLimit?: number };
type VariantStats = {
  variantId: string;
  stock: number;
  remaining: number;
  paidUnits: number;
  liveUnits: number;
};

/** A drop of several variants, live from a second ago: the sale's own price and stock left out. */
function createDrop(name: string, variants: Variant[], overrides: Record<string, unknown> = {}) {
  return client.createSale({ name, variants, priceCents: undefined, stock: undefined, ...overrides });
}

/** A cart bought through the API, as another shopper's script would; returns the status. */
async function buyItems(sale: SaleBody, userId: string, items: { variantId: string; quantity: number }[]) {
  const res = await checkedFetch(`${site.url}/api/buy/${sale.productToken}`, {
    method: "POST",
    headers: {
      Authorization: `Bearer ${await client.login(userId)}`,
      "Content-Type": "application/json",
      "Idempotency-Key": crypto.randomUUID(),
    },
    body: JSON.stringify({ items }),
  });
  await res.arrayBuffer();
  return res.status;
}

async function variantStats(saleId: string): Promise<Map<string, VariantStats>> {
  const stats = (await client.stats(saleId)) as unknown as { variants?: VariantStats[] };
  return new Map((stats.variants ?? []).map((v) => [v.variantId, v]));
}

async function shopperPage(userId?: string): Promise<Page> {
  const context = await shopperContext({ site, client, browser }, contexts, DESKTOP, userId);
  const page = await context.newPage();
  pageErrors.push(watchErrors(page));
  return page;
}

/** An element's text with its white space collapsed, as it reads. */
const text = async (page: Page, selector: string) =>
  ((await page.textContent(selector)) ?? "").replace(/\s+/g, " ").trim();
const option = (variantId: string) => `#variant-options button[data-variant-id="${variantId}"]`;
const line = (variantId: string) => `#cart-lines li[data-variant-id="${variantId}"]`;

const SIZES: Variant[] = [
  { variantId: "40", name: "EU 40", priceCents: 12900, stock: 5 },
  { variantId: "41", name: "EU 41", priceCents: 12900, stock: 5 },
  { variantId: "42", name: "EU 42", priceCents: 13900, stock: 5 },
];

describe.skipIf(!hasChromium)(
  hasChromium ? "variants and carts on the pages in Chromium" : SKIP_REASON,
  () => {
    browserSiteForDescribe({ DEV_LOGIN: "true" }, contexts, (s) => {
      ({ site, client, browser } = s);
    });

    it("picks two sizes into the cart and buys them in one press; the order shows both lines and the amount", async () => {
      const sale = await createDrop("Cart Runners", SIZES, {
        perUserLimit: 4,
        description: "A light runner for the city.",
        imageUrl: "/images/demo-sneaker.svg",
      });
      const page = await shopperPage("cart-buyer");
      await page.goto(`/?sale=${sale.saleId}`);
      await page.waitForSelector("#variant-picker:not([hidden])");
      // the sale's image instead of its initials, and its description
      await page.waitForSelector("#product-image:not([hidden])");
      expect(await page.isHidden("#product-initials")).toBe(true);
      expect(await text(page, "#sale-description")).toBe("A light runner for the city.");
      expect(await page.isHidden("#qty")).toBe(true);
      expect(await text(page, "#sale-price")).toBe("$129.00 – $139.00");
      await page.waitForSelector("#buy-label:text('Pick an option to buy')");
      expect(await page.isDisabled("#buy-button")).toBe(true);
      expect(await text(page, option("41"))).toMatch(/^EU 41 \$129\.00 5 left$/);

      await page.click(option("40"));
      await page.click(option("42"));
      expect(await page.getAttribute(option("40"), "aria-pressed")).toBe("true");
      expect(await page.getAttribute(option("41"), "aria-pressed")).toBe("false");
      expect(await page.getAttribute(option("42"), "aria-pressed")).toBe("true");
      await page.click(`${line("40")} button[aria-label="One more of EU 40"]`);
      expect(await text(page, "#cart-total")).toBe("3 units · $397.00");
      await page.waitForSelector("#buy-label:text('Buy now · $397.00')");
      await screenshot(page, "variants-cart-desktop");

      // a line can leave the cart again, and come back
      await page.click(`${line("42")} button.cart-remove`);
      expect(await page.locator(line("42")).count()).toBe(0);
      expect(await page.getAttribute(option("42"), "aria-pressed")).toBe("false");
      await page.click(option("42"));

      const answered = page.waitForResponse((r) => r.url().includes("/api/buy/"));
      await page.click("#buy-button");
      const response = await answered;
      expect(response.status()).toBe(202);
      expect(JSON.parse(response.request().postData() ?? "{}")).toEqual({
        items: [
          { variantId: "40", quantity: 2 },
          { variantId: "42", quantity: 1 },
        ],
      });
      const { orderId } = (await response.json()) as { orderId: string };

      await page.waitForSelector('#order-panel[data-status="awaiting_payment"]', { timeout: 20_000 });
      const lines = await page.$$eval("#receipt-lines li", (items) =>
        items.map((li) => (li.textContent ?? "").replace(/\s+/g, " ").trim()),
      );
      expect(lines).toEqual(["EU 40 2 × $129.00 $258.00", "EU 42 1 × $139.00 $139.00"]);
      expect(await text(page, "#receipt-qty")).toBe("3");
      expect(await text(page, "#receipt-total")).toBe("$397.00");
      expect(await text(page, "#order-detail")).toContain("EU 40 × 2, EU 42 × 1");
      await page.waitForSelector("#pay-button:text('Pay $397.00')");
      await screenshot(page, "variants-order-desktop");

      const order = await checkedFetch(`${site.url}/api/orders/${orderId}`, {
        headers: { Authorization: `Bearer ${await client.login("cart-buyer")}` },
      });
      const body = (await order.json()) as { amountCents: number; quantity: number; items: unknown[] };
      expect(body.amountCents).toBe(39700);
      expect(body.quantity).toBe(3);
      expect(body.items).toHaveLength(2);
      const stats = await variantStats(sale.saleId);
      expect([stats.get("40")?.remaining, stats.get("41")?.remaining, stats.get("42")?.remaining]).toEqual([
        3, 5, 4,
      ]);

      await page.click("#pay-button");
      await page.waitForSelector('#order-panel[data-status="paid"]', { timeout: 15_000 });
      expect(await page.locator("#receipt-lines li").count()).toBe(2);
      expect(pageErrors.flat()).toEqual([]);
    });

    it("greys a size that is gone within a second on the sale page and the list, while the others sell", async () => {
      const sale = await createDrop(
        "Last Pair Runners",
        [
          { variantId: "44", name: "EU 44", priceCents: 12900, stock: 5 },
          { variantId: "45", name: "EU 45", priceCents: 12900, stock: 1 },
        ],
        { perUserLimit: 2 },
      );
      const page = await shopperPage("grey-watcher");
      const streamed = page.waitForResponse((r) => r.url().endsWith(`/api/sales/${sale.saleId}/events`));
      await page.goto(`/?sale=${sale.saleId}`);
      await streamed;
      await page.waitForSelector(`${option("45")}:not([disabled])`);
      expect(await text(page, option("45"))).toBe("EU 45 1 left");
      await page.click(option("45"));
      await page.waitForSelector(line("45"));

      const list = await shopperPage();
      const listed = list.waitForResponse((r) => r.url().endsWith("/api/sales/events"));
      await list.goto("/");
      await listed;
      const chip = `[data-sale-id="${sale.saleId}"] .variant-chip[data-variant-id="45"]`;
      await list.waitForSelector(`${chip}[data-state="available"]`);
      await page.waitForTimeout(500);

      expect(await buyItems(sale, "grey-early-bird", [{ variantId: "45", quantity: 1 }])).toBe(202);
      const at = Date.now();
      await page.waitForSelector(`${option("45")}[disabled]`, { timeout: 5000 });
      const onPage = Date.now() - at;
      await list.waitForSelector(`${chip}[data-state="sold_out"]`, { timeout: 5000 });
      const onList = Date.now() - at;
      console.log(`a size gone: greyed on the sale page after ${onPage} ms, on the list after ${onList} ms`);
      expect(onPage).toBeLessThan(1000);
      expect(onList).toBeLessThan(1000);
      expect(await text(page, option("45"))).toBe("EU 45 Sold out");
      expect(await text(list, chip)).toBe("EU 45 (sold out)");
      // the cart lost the size, and said so
      expect(await page.locator(line("45")).count()).toBe(0);
      expect(await text(page, "#message")).toBe("EU 45 just sold out and left your cart.");
      expect(await page.getAttribute(option("45"), "aria-pressed")).toBe("false");
      await screenshot(page, "variants-size-gone-desktop");
      await screenshot(list, "variants-list-size-gone-desktop");

      // the gone size answers 410, the other still sells from the page
      expect(await buyItems(sale, "grey-late", [{ variantId: "45", quantity: 1 }])).toBe(410);
      await page.click(option("44"));
      await page.click("#buy-button");
      await page.waitForSelector('#order-panel[data-status="awaiting_payment"]', { timeout: 20_000 });
      expect((await variantStats(sale.saleId)).get("44")?.remaining).toBe(4);
      expect(pageErrors.flat()).toEqual([]);
    });

    it("shows each variant's remaining live to a shopper waiting in the queue", async () => {
      const sale = await createDrop(
        "Queued Runners",
        [
          { variantId: "38", name: "EU 38", priceCents: 12900, stock: 5 },
          { variantId: "39", name: "EU 39", priceCents: 12900, stock: 2 },
        ],
        { perUserLimit: 1, admission: "queue" },
      );
      const page = await shopperPage("room-waiter");
      await page.goto(`/?sale=${sale.saleId}`);
      await page.waitForSelector("#queue-panel:not([hidden])");
      await page.waitForSelector("#variant-picker:not([hidden])");
      expect(await text(page, option("39"))).toBe("EU 39 2 left");
      const res = await checkedFetch(`${site.url}/api/admin/sales/${sale.saleId}/stock`, {
        method: "POST",
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, "Content-Type": "application/json" },
        body: JSON.stringify({ delta: 3, variantId: "39" }),
      });
      expect(res.status).toBe(200);
      await page.waitForFunction(
        (selector) => document.querySelector(selector)?.textContent?.includes("5 left"),
        option("39"),
        { timeout: 5000 },
      );
      expect(await text(page, option("38"))).toBe("EU 38 5 left");
      await screenshot(page, "variants-queue-desktop");
    });

    it("tells a cart's shortages, unknown variants and limits apart, naming the sizes", async () => {
      const page = await shopperPage();
      await page.goto("/");
      // A string, so that the test runner's bundler leaves the browser's import() alone.
      const said = (await page.evaluate(`(async () => {
      const { shopperMessage } = await import("/assets/messages.js");
      const names = { 40: "EU 40", 41: "EU 41" };
      const variantName = (id) => names[id] ?? id;
      return {
        short: shopperMessage(
          { code: "INSUFFICIENT_STOCK", variants: [{ variantId: "40", remaining: 1 }, { variantId: "41", remaining: 0 }] },
          { variantName },
        ),
        single: shopperMessage({ code: "INSUFFICIENT_STOCK", remaining: 2 }),
        unknown: shopperMessage({ code: "UNKNOWN_VARIANT" }, { variantName }),
        limit: shopperMessage({ code: "LIMIT_EXCEEDED", mayStillBuy: 1 }, { variantName }),
        limitOfVariant: shopperMessage({ code: "LIMIT_EXCEEDED", mayStillBuy: 0, variantId: "41" }, { variantName }),
        soldOut: shopperMessage({ code: "SOLD_OUT" }, { variantName }),
        fallback: shopperMessage({ code: "SOMETHING_ELSE" }),
      };
    })()`)) as Record<string, string>;
      expect(said.short).toBe(
        "Only 1 unit of EU 40 and none of EU 41 left. Your cart now holds what there is; check it and buy again.",
      );
      expect(said.single).toBe("Only 2 units left. Lower the quantity and try again.");
      expect(said.unknown).toBe(
        "An option in your cart is no longer on offer. Reload the page to see what is.",
      );
      expect(said.limit).toBe("Limit reached: you can buy 1 unit more at most.");
      expect(said.limitOfVariant).toBe("Limit reached for EU 41: you can buy 0 units more of it at most.");
      expect(new Set(Object.values(said)).size).toBe(Object.keys(said).length);
    });

    it("the operator creates a drop with variants, adjusts one variant's stock and charts each variant", async () => {
      const page = await browser.newPage({ viewport: { width: 1440, height: 1000 }, baseURL: site.url });
      pageErrors.push(watchErrors(page));
      await page.goto("/admin");
      await page.fill("#admin-token", ADMIN_TOKEN);
      await page.press("#admin-token", "Enter");
      await page.waitForSelector("#console:not([hidden])");
      await page.fill("#f-name", "Operator Tees");
      await page.fill("#f-productId", `tees-${Date.now()}`);
      await page.fill("#f-price", "25");
      await page.fill("#f-stock", "10");
      await page.fill("#f-perUserLimit", "3");
      const row = (i: number, key: string) => `#variant-rows li[data-row="${i}"] [data-key="${key}"]`;
      await page.click("#add-variant");
      expect(await page.isHidden("#f-price")).toBe(true);
      expect(await page.inputValue(row(0, "priceCents"))).toBe("25");
      await page.fill(row(0, "variantId"), "S");
      await page.fill(row(0, "name"), "Small");
      await page.click("#add-variant");
      await page.fill(row(1, "variantId"), "M");
      await page.fill(row(1, "name"), "Medium");
      await page.click("#add-variant");
      await page.fill(row(2, "variantId"), "L");
      await page.fill(row(2, "name"), "Large");
      await page.fill(row(2, "priceCents"), "27.50");
      await page.fill(row(2, "stock"), "2");
      await page.fill(row(2, "perUserLimit"), "1");
      await page.click("#variant-rows li[data-row='2'] summary");
      await page.fill(row(2, "description"), "Cut long.");
      await page.fill("#f-description", "A plain tee in three sizes.");
      await page.click("#starts-now");
      await screenshot(page, "operator-variants-form-desktop");
      await page.click("#create-button");
      await page.waitForSelector("#form-status:text('Created')");
      await page.waitForSelector("#live-name:text('Operator Tees')");

      const sale = (await client.adminSales()).sales.find((s) => s.name === "Operator Tees") as
        | (SaleBody & {
            variants: (Variant & { remaining: number; description?: string })[];
            description?: string;
          })
        | undefined;
      if (!sale) throw new Error("the created drop is not listed");
      expect(sale.variants.map((v) => [v.variantId, v.name, v.priceCents, v.remaining])).toEqual([
        ["S", "Small", 2500, 10],
        ["M", "Medium", 2500, 10],
        ["L", "Large", 2750, 2],
      ]);
      expect(sale.variants[2]?.description).toBe("Cut long.");
      expect(sale.description).toBe("A plain tee in three sizes.");
      expect(await page.isHidden("#f-price")).toBe(false);

      await page.waitForSelector("#variants-box:not([hidden])", { timeout: 10_000 });
      const chart = () => page.getAttribute("#variant-chart svg", "aria-label");
      expect(await chart()).toBe(
        "Each variant: Small 10 of 10 left, Medium 10 of 10 left, Large 2 of 2 left",
      );
      expect(await page.$$eval("#stock-variant option", (o) => o.map((x) => x.textContent))).toEqual([
        "Small",
        "Medium",
        "Large",
      ]);

      await page.selectOption("#stock-variant", "L");
      await page.fill("#stock-delta", "5");
      await page.press("#stock-delta", "Enter");
      await page.waitForFunction(
        () =>
          document
            .querySelector("#variant-chart svg")
            ?.getAttribute("aria-label")
            ?.includes("Large 7 of 7 left"),
        undefined,
        { timeout: 10_000 },
      );
      await page.waitForSelector("#k-remaining:text('27 / 27')");
      const stats = await variantStats(sale.saleId);
      expect([stats.get("S")?.stock, stats.get("M")?.stock, stats.get("L")?.stock]).toEqual([10, 10, 7]);

      await page.fill("#stock-delta", "-20");
      await page.press("#stock-delta", "Enter");
      await page.waitForSelector("#stock-error:text('at most 7 can go')");

      // a buy shows on its variant's bar
      expect(await buyItems(sale, "tee-buyer", [{ variantId: "M", quantity: 2 }])).toBe(202);
      await page.waitForFunction(
        () =>
          document
            .querySelector("#variant-chart svg")
            ?.getAttribute("aria-label")
            ?.includes("Medium 8 of 10 left"),
        undefined,
        { timeout: 10_000 },
      );
      await screenshot(page, "operator-variants-live-desktop");
      await page.close();
      expect(pageErrors.flat()).toEqual([]);
    });
  },
);

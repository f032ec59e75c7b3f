import type { Browser, BrowserContext, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { DESKTOP, hasChromium, SKIP_REASON, screenshot, watchErrors } from "../support/browser";
import { browserSiteForDescribe, shopperContext } from "../support/browser-site";
import { ADMIN_TOKEN, type SiteClient } from "../support/site-client";
import type { Site } from "../support/site-worker";

let site: Site;
let client: SiteClient;
let browser: Browser;
const contexts: BrowserContext[] = [];
const pageErrors: string[][] = [];

async function shopperPage(userId: string): Promise<Page> {
  const context = await shopperContext({ site, client, browser }, contexts, DESKTOP, userId);
  const page = await context.newPage();
  pageErrors.push(watchErrors(page));
  return page;
}

const text = async (page: Page, selector: string) => ((await page.textContent(selector)) ?? "").trim();

describe.skipIf(!hasChromium)(hasChromium ? "the queue on the shopper page in Chromium" : SKIP_REASON, () => {
  browserSiteForDescribe({ DEV_LOGIN: "true" }, contexts, (s) => {
    ({ site, client, browser } = s);
  });

  it("joins the queue (with a proof of work), is admitted live, and buys with the admission", async () => {
    const sale = await client.createSale({
      name: "Queued Sneakers",
      stock: 1,
      perUserLimit: 1,
      admission: "queue",
      proofOfWork: true,
    });
    const first = await shopperPage("queue-first");
    await first.goto(`/?sale=${sale.saleId}`);
    await first.waitForSelector("#queue-panel:not([hidden])");
    expect(await text(first, "#buy-label")).toBe("Wait for your turn in the queue");
    await first.click("#queue-join");
    await first.waitForSelector("#queue-panel[data-verdict='admitted']", { timeout: 30_000 });
    expect(await text(first, "#queue-position")).toBe("1");
    expect(await text(first, "#queue-draw")).toMatch(/^Seed hash [0-9a-f]{64}/);

    const second = await shopperPage("queue-second");
    await second.goto(`/?sale=${sale.saleId}`);
    await second.click("#queue-join");
    await second.waitForSelector("#queue-panel[data-verdict]", { timeout: 30_000 });
    expect(await text(second, "#queue-position")).toBe("2");
    await screenshot(second, "queue-waiting-desktop");

    await first.waitForFunction(() =>
      document.querySelector("#buy-label")?.textContent?.startsWith("Buy now"),
    );
    await first.click("#buy-button");
    await first.waitForSelector("#order-panel[data-status]", { timeout: 30_000 });
    await screenshot(first, "queue-bought-desktop");
    // the second shopper is told, without reloading, that no unit can come to it: the unit is bought
    // and (paid or not) its place is past every unit that can still come back, or it may still get one
    await second.waitForSelector(
      "#queue-panel[data-verdict='may_get'], #queue-panel[data-verdict='will_not_get']",
      { timeout: 15_000 },
    );
    expect(pageErrors.flat()).toEqual([]);
  });

  it("the operator sets the mode in the form and watches the room's depth and verdicts", async () => {
    const page = await browser.newPage({ viewport: { width: 1440, height: 1000 }, baseURL: site.url });
    pageErrors.push(watchErrors(page));
    await page.goto("/admin");
    await page.fill("#admin-token", ADMIN_TOKEN);
    await page.press("#admin-token", "Enter");
    await page.waitForSelector("#console:not([hidden])");
    await page.fill("#f-name", "Room Hoodie");
    await page.fill("#f-productId", `room-${Date.now()}`);
    await page.fill("#f-price", "79");
    await page.fill("#f-stock", "1");
    await page.fill("#f-perUserLimit", "1");
    await page.selectOption("#f-admission", "queue");
    await page.click("#starts-now");
    await page.click("#create-button");
    await page.waitForSelector("#live-name:text('Room Hoodie')");
    const sale = (await client.adminSales()).sales.find((s) => s.name === "Room Hoodie");
    expect(sale?.admission).toBe("queue");
    for (const u of ["r1", "r2", "r3"]) {
      const res = await fetch(`${site.url}/api/sales/${sale?.saleId}/queue`, {
        method: "POST",
        headers: { Authorization: `Bearer ${await client.login(u)}` },
      });
      expect(res.status).toBe(200);
    }
    await page.waitForSelector("#room-kpis:not([hidden])");
    await page.waitForSelector("#r-depth:text('3')", { timeout: 15_000 });
    await page.waitForSelector("#r-admitted:text('1')", { timeout: 15_000 });
    await screenshot(page, "operator-room-desktop");
    await page.close();
  });
});

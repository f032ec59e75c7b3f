/**
 * The site and Chromium for a describe block of shopper pages: started before its tests, closed after
 * them with every browser profile the tests opened; and a fresh profile signed in through the dev login.
 *
 * @example
 * let site: Site;
 * let client: SiteClient;
 * let browser: Browser;
 * const contexts: BrowserContext[] = [];
 * describe("the shopper page", () => {
 *   browserSiteForDescribe({ DEV_LOGIN: "true" }, contexts, (s) => ({ site, client, browser } = s));
 * });
 */
import type { Browser, BrowserContext } from "playwright-core";
import { afterAll, beforeAll } from "vitest";
import { launchBrowser } from "./browser";
import { type SiteClient, siteClient } from "./site-client";
import { type Site, startSite } from "./site-worker";

export type BrowserSite = { site: Site; client: SiteClient; browser: Browser };

/** Registers the describe block's beforeAll (site, client, Chromium) and afterAll (contexts, browser, site). */
export function browserSiteForDescribe(
  vars: Record<string, string>,
  contexts: BrowserContext[],
  ready: (s: BrowserSite) => void,
  siteOptions: { stripe?: boolean } = {},
): void {
  let site: Site | undefined;
  let browser: Browser | undefined;
  beforeAll(async () => {
    site = await startSite({ vars, ...siteOptions });
    const client = siteClient(site.url);
    browser = await launchBrowser();
    ready({ site, client, browser });
  });
  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => {});
    await browser?.close();
    await site?.stop();
  });
}

/** A fresh browser profile on the site (kept in `contexts`), signed in as `userId` when given. */
export async function shopperContext(
  s: BrowserSite,
  contexts: BrowserContext[],
  viewport: { width: number; height: number },
  userId?: string,
): Promise<BrowserContext> {
  const context = await s.browser.newContext({ viewport, baseURL: s.site.url });
  contexts.push(context);
  if (userId) {
    const token = await s.client.login(userId);
    await context.addInitScript(
      ([t, u]) =>
        localStorage.setItem("flashsale.shopper", JSON.stringify({ userId: u, token: t, expiresAt: null })),
      [token, userId],
    );
  }
  return context;
}

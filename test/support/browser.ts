/**
 * Headless Debian Chromium for the end-to-end tests, driven by playwright-core (no browser download).
 * `hasChromium` is false when /usr/bin/chromium is missing: the e2e suites then skip and say why.
 *
 * @example
 * const browser = await launchBrowser();
 * const page = await browser.newPage({ viewport: PHONE });
 * await screenshot(page, "shopper-paid-phone");
 */
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";

export const CHROMIUM_PATH = "/usr/bin/chromium";
export const hasChromium = existsSync(CHROMIUM_PATH);
export const SKIP_REASON = `e2e skipped: ${CHROMIUM_PATH} is missing (apt-get install chromium)`;

export const DESKTOP = { width: 1280, height: 900 };
export const PHONE = { width: 390, height: 844 };

const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-dev-shm-usage",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: ARGS });
}

export const screenshotDir = resolve(import.meta.dirname, "../../test-output/screenshots");

/** The tallest part of a page a screenshot keeps: a long page (the API reference) costs seconds per screen. */
const SCREENSHOT_MAX_HEIGHT = 8_000;

/** Saves a full-page PNG (its first 8,000 px) under test-output/screenshots/ (not committed); returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  await mkdir(screenshotDir, { recursive: true });
  const path = join(screenshotDir, `${name}.png`);
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.waitForTimeout(250);
  const { width, height } = await page.evaluate(() => ({
    width: document.documentElement.scrollWidth,
    height: document.documentElement.scrollHeight,
  }));
  const clip = { x: 0, y: 0, width, height: Math.min(height, SCREENSHOT_MAX_HEIGHT) };
  await page.screenshot({ path, fullPage: true, clip, animations: "disabled", timeout: 90_000 });
  return path;
}

/** Collects what should never happen on a page: uncaught errors and Content-Security-Policy violations. */
export function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(error.message));
  page.on("console", (message) => {
    if (message.type() === "error" && message.text().includes("Content Security Policy"))
      errors.push(message.text());
  });
  return errors;
}

import type { Browser, Page } from "playwright-core";
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
import { type Site, startSite } from "../support/site-worker";

type Operation = {
  security?: Record<string, string[]>[];
  responses: Record<string, { headers?: Record<string, unknown> }>;
};
type Schema = { properties?: Record<string, Schema>; required?: string[]; enum?: unknown[] };
type OpenApi = {
  info: { title: string };
  security?: Record<string, string[]>[];
  paths: Record<string, Record<string, Operation>>;
  webhooks?: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, unknown>; schemas: Record<string, Schema> };
};

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/**
 * OpenAPI 3.1 the engine's document does not use (yet): path-level and referenced parameters, referenced
 * responses and headers, a stream, alternatives, a self-referencing schema, untagged operations, webhooks.
 */
const WIDER_DOCUMENT = {
  openapi: "3.1.0",
  info: { title: "Wider", version: "2" },
  servers: [{ url: "https://shop.example/api" }],
  security: [{ key: [] }],
  tags: [{ name: "Streams", description: "Pushed `events`." }],
  components: {
    securitySchemes: {
      key: { type: "apiKey", in: "query", name: "key" },
      basic: { type: "http", scheme: "basic" },
    },
    parameters: {
      Limit: { name: "limit", in: "query", schema: { type: "integer", minimum: 1, maximum: 100 } },
    },
    headers: { Wait: { description: "Seconds.", schema: { type: "string", pattern: "^[1-9][0-9]*$" } } },
    responses: {
      Busy: {
        description: "`UNAVAILABLE`: busy.",
        headers: { "Retry-After": { $ref: "#/components/headers/Wait" } },
      },
    },
    schemas: {
      Node: {
        type: "object",
        required: ["id"],
        properties: {
          id: { type: ["string", "null"] },
          children: { type: "array", items: { $ref: "#/components/schemas/Node" } },
          kind: { oneOf: [{ const: "leaf" }, { type: "integer", exclusiveMinimum: 0 }] },
          labels: { type: "object", additionalProperties: { type: "string" } },
          deep: {
            type: "object",
            properties: { inner: { type: "object", properties: { on: { type: "boolean" } } } },
          },
        },
      },
    },
  },
  paths: {
    "/events/{id}": {
      parameters: [{ name: "id", in: "path", required: true, schema: { type: "string" } }],
      get: {
        tags: ["Streams"],
        summary: "A stream",
        security: [{}, { key: [], basic: [] }],
        parameters: [{ $ref: "#/components/parameters/Limit" }],
        responses: {
          200: { description: "Events.", content: { "text/event-stream": { schema: { type: "string" } } } },
          503: { $ref: "#/components/responses/Busy" },
        },
      },
    },
    "/nodes": {
      post: {
        operationId: "createNode",
        requestBody: {
          required: true,
          content: {
            "application/json": {
              schema: {
                allOf: [{ $ref: "#/components/schemas/Node" }, { properties: { note: { type: "string" } } }],
              },
            },
          },
        },
        responses: { default: { description: "Anything." } },
      },
    },
  },
  webhooks: {
    nodeCreated: { post: { summary: "Hook", security: [], responses: { 200: { description: "Ok." } } } },
  },
};

let site: Site;
let browser: Browser;
let page: Page;
let errors: string[] = [];
let doc: OpenApi;

/** Every operation of the document as "METHOD /path", with the operation itself. */
function documentOperations(): [string, Operation][] {
  return [...Object.entries(doc.paths), ...Object.entries(doc.webhooks ?? {})].flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((m): [string, Operation] => [
      `${m.toUpperCase()} ${path}`,
      item[m] as Operation,
    ]),
  );
}

/** What the page shows for each operation article: its label, anchor, statuses and security links. */
function shownOperations() {
  return page.$$eval("#reference article.operation", (articles) =>
    articles.map((a) => ({
      label: `${a.querySelector(".op-title .method")?.textContent} ${a.querySelector(".op-path")?.textContent}`,
      id: a.id,
      href: a.querySelector(".op-link")?.getAttribute("href"),
      statuses: [...a.querySelectorAll(".response .status")].map((s) => s.textContent),
      schemes: [...a.querySelectorAll(".op-security a")].map((l) => l.getAttribute("href")),
      text: a.textContent ?? "",
    })),
  );
}

describe.skipIf(!hasChromium)(hasChromium ? "the API reference page in Chromium" : SKIP_REASON, () => {
  beforeAll(async () => {
    site = await startSite();
    doc = (await (await fetch(`${site.url}/api/openapi.json`)).json()) as OpenApi;
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: DESKTOP, baseURL: site.url });
    errors = watchErrors(page);
  });
  afterAll(async () => {
    await browser?.close();
    await site?.stop();
  });

  it("shows every operation of the document, by method and path, each with its anchor", async () => {
    const response = await page.goto("/docs");
    expect(response?.headers()["content-security-policy"]).toContain("script-src 'self'");
    await page.waitForSelector("#reference article.operation");
    expect(await page.title()).toBe(`${doc.info.title} · API reference`);
    expect((await page.textContent("h1"))?.trim()).toBe(doc.info.title);
    const shown = await shownOperations();
    const expected = documentOperations();
    expect(shown.map((op) => op.label).sort()).toEqual(expected.map(([label]) => label).sort());
    for (const op of shown) {
      expect(op.href).toBe(`#${op.id}`);
      expect(await page.locator(`#toc a[href="#${op.id}"]`).count()).toBe(1);
    }
    for (const [label, operation] of expected) {
      const op = shown.find((s) => s.label === label);
      expect(op?.statuses, label).toEqual(Object.keys(operation.responses));
      for (const [status, res] of Object.entries(operation.responses))
        for (const header of Object.keys(res.headers ?? {}))
          expect(op?.text, `${label} ${status}`).toContain(header);
    }
    await screenshot(page, "api-reference-desktop");
  });

  it("explains each security scheme and links each operation to the ones it needs", async () => {
    for (const name of Object.keys(doc.components.securitySchemes))
      expect(await page.textContent(`#auth-${name} h3`)).toBe(name);
    expect(await page.textContent("#auth-shopperJwt")).toContain("Authorization: Bearer <JWT>");
    expect(await page.textContent("#auth-qstashSignature")).toContain("Upstash-Signature header");
    const shown = await shownOperations();
    for (const [label, operation] of documentOperations()) {
      const needed = (operation.security ?? doc.security ?? []).flatMap((r) => Object.keys(r));
      const op = shown.find((s) => s.label === label);
      expect(op?.schemes, label).toEqual(needed.map((name) => `#auth-${name}`));
      if (!needed.length) expect(op?.text, label).toContain("none: a public route");
    }
  });

  it("renders the Sale schema as a tree of its fields, reachable from the operations", async () => {
    const sale = doc.components.schemas.Sale as Schema;
    const fields = await page.$$eval("#schema-Sale .schema > .tree > .field-item", (items) =>
      items.map((li) => ({
        name: li.querySelector(".field-name")?.textContent,
        required: li.querySelector(".mark-required") !== null,
        text: li.textContent ?? "",
      })),
    );
    expect(fields.map((f) => f.name)).toEqual(Object.keys(sale.properties ?? {}));
    expect(fields.filter((f) => f.required).map((f) => f.name)).toEqual(sale.required);
    const status = fields.find((f) => f.name === "status");
    for (const value of sale.properties?.status?.enum ?? []) expect(status?.text).toContain(String(value));
    expect(fields.find((f) => f.name === "priceCents")?.text).toMatch(/integer.*min\s*0.*example\s*4900/s);

    await page.click('#schema-SaleList a.type-ref[href="#schema-Sale"]');
    expect(new URL(page.url()).hash).toBe("#schema-Sale");
    await page.goto("/docs#schema-Sale");
    await page.waitForSelector("#schema-Sale");
    const top = await page.$eval("#schema-Sale", (el) => el.getBoundingClientRect().top);
    expect(top).toBeGreaterThanOrEqual(0);
    expect(top).toBeLessThan(200);
  });

  it("offers the raw document and is linked from the shop and the operator console", async () => {
    const download = page.locator('a[href="/api/openapi.json"][download]');
    expect(await download.count()).toBeGreaterThan(0);
    await page.goto("/");
    expect(await page.locator('a[href="/docs"]').count()).toBe(1);
    await page.goto("/admin");
    expect(await page.locator('a[href="/docs"]').count()).toBe(1);
  });

  it("renders the rest of OpenAPI 3.1 generically (references, streams, alternatives, cycles, webhooks)", async () => {
    await page.route("**/api/openapi.json", (route) => route.fulfill({ json: WIDER_DOCUMENT }));
    try {
      await page.goto("/docs");
      await page.waitForSelector("#reference article.operation");
      const shown = await shownOperations();
      expect(shown.map((op) => op.label)).toEqual(["GET /events/{id}", "POST /nodes", "POST nodeCreated"]);
      const [stream, create, hook] = shown;
      expect(stream?.text).toMatch(/idin pathstringrequired/);
      expect(stream?.text).toMatch(/limitin queryinteger.*min1.*max100/);
      expect(stream?.text).toContain("no credential or key and basic");
      expect(stream?.text).toMatch(/Retry-Afterheaderstring.*Seconds\..*pattern\^\[1-9\]/);
      expect(stream?.text).toContain("text/event-stream");
      expect(create?.id).toBe("op-createNode");
      expect(create?.schemes).toEqual(["#auth-key"]);
      expect(create?.text).toContain("Node & object");
      expect(hook?.text).toContain("none: a public route");
      expect(await page.textContent("#tag-Other-title")).toBe("Other");
      const node = (await page.textContent("#schema-Node")) ?? "";
      expect(node).toContain("string | null");
      expect(node).toContain("array of Node");
      expect(node).toContain("map of string");
      expect(node).toMatch(/alwaysleaf.*above0/);
      expect(await page.locator("#schema-Node .tree .tree .tree .field-name").textContent()).toBe("on");
      expect(await page.textContent(".docs-base")).toContain("https://shop.example/api");
    } finally {
      await page.unroute("**/api/openapi.json");
    }
  });

  it("says when the document cannot be loaded, and loads it on request", async () => {
    await page.route("**/api/openapi.json", (route) =>
      route.fulfill({ status: 503, json: { error: { code: "UNAVAILABLE", message: "Try again soon." } } }),
    );
    await page.goto("/docs");
    await page.waitForSelector("#docs-status.notice-error");
    expect(await page.textContent("#docs-status")).toContain("Try again soon.");
    expect(await page.locator("#reference article").count()).toBe(0);
    await page.unroute("**/api/openapi.json");
    await page.click("#docs-status button");
    await page.waitForSelector("#reference article.operation");
    expect(await page.isHidden("#docs-status")).toBe(true);
  });

  it("reads on a phone without sideways scrolling", async () => {
    await page.setViewportSize(PHONE);
    await page.goto("/docs");
    await page.waitForSelector("#reference article.operation");
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    await screenshot(page, "api-reference-phone");
    expect(errors).toEqual([]);
  });
});

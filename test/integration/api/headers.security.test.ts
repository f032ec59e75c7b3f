import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appForFile } from "../../support/app-per-file";
import { type Site, startSite } from "../../support/site-worker";

/** Security headers and no CORS grant, on the API's answers and on the pages. */
const app = appForFile({ vars: { RATE_LIMIT_USER_PER_WINDOW: "1000" } });

describe("headers", () => {
  it("API responses carry the security headers and no CORS grant, preflight included", async () => {
    const sale = await app.api.createSale({ stock: 1 });
    const origin = { Origin: "https://evil.example" };
    const answers = [
      await app.api.call("GET", "/api/sales", { headers: origin }),
      await app.api.call("GET", `/api/sales/${sale.saleId}`, { headers: origin }),
      await app.api.call("POST", `/api/buy/${sale.productToken}`, { headers: origin, body: {} }),
      await app.api.call("GET", "/api/admin/sales", { headers: origin }),
      await app.api.call("OPTIONS", `/api/buy/${sale.productToken}`, {
        headers: {
          ...origin,
          "Access-Control-Request-Method": "POST",
          "Access-Control-Request-Headers": "authorization",
        },
      }),
      await app.api.call("GET", "/api/nothing-here", { headers: origin }),
    ];
    for (const res of answers) {
      expect(res.headers.get("access-control-allow-origin")).toBeNull();
      expect(res.headers.get("access-control-allow-credentials")).toBeNull();
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(res.headers.get("x-frame-options")).toBe("SAMEORIGIN");
      expect(res.headers.get("strict-transport-security")).toMatch(/max-age=\d+/);
      expect(res.headers.get("referrer-policy")).toBe("no-referrer");
      expect(res.status).toBeLessThan(500);
    }
  });
});

describe("pages", () => {
  let site: Site;
  beforeAll(async () => {
    site = await startSite();
  });
  afterAll(async () => {
    await site?.stop();
  });

  it("are served with no CORS grant", async () => {
    for (const path of ["/", "/admin.html", "/assets/api.js"]) {
      const res = await fetch(`${site.url}${path}`, { headers: { Origin: "https://evil.example" } });
      await res.arrayBuffer();
      expect([path, res.status]).toEqual([path, 200]);
      expect(res.headers.get("access-control-allow-origin")).toBeNull();
    }
  });

  it("carry security headers (nosniff, no framing, referrer policy, a CSP)", async () => {
    for (const path of ["/", "/admin.html"]) {
      const res = await fetch(`${site.url}${path}`);
      await res.arrayBuffer();
      expect(res.headers.get("x-content-type-options"), path).toBe("nosniff");
      expect(
        res.headers.get("x-frame-options") ??
          res.headers.get("content-security-policy")?.match(/frame-ancestors/)?.[0],
        path,
      ).toBeTruthy();
      expect(res.headers.get("referrer-policy"), path).toBeTruthy();
      expect(res.headers.get("content-security-policy"), path).toBeTruthy();
    }
  });
});

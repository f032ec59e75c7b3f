import { describe, expect, it } from "vitest";
import { saleDefinition } from "../../support/api";
import { appForFile } from "../../support/app-per-file";
import { ADMIN_TOKEN } from "../../support/shopper";

/*
 * `imageUrl` is an https: URL or a path on the engine's own origin, "never //…". A browser drops ASCII tab
 * and newline from a URL before resolving it, so "/\t/evil.example/x.png" is "//evil.example/x.png": the
 * image of another host.
 */
const app = appForFile();

describe("an image URL that is a path on the engine's origin", () => {
  for (const imageUrl of ["/\t/evil.example/x.png", "/\n/evil.example/x.png", "/\r/evil.example/x.png"]) {
    it(`refuses ${JSON.stringify(imageUrl)}, which a browser resolves to another host`, async () => {
      expect(new URL(imageUrl, "https://shop.example").host).toBe("evil.example");
      const res = await app.api.call("POST", "/api/admin/sales", {
        token: ADMIN_TOKEN,
        body: { ...saleDefinition({ stock: 5 }), imageUrl },
      });
      expect(res.status).toBe(400);
    });
  }
});

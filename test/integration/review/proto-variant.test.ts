import { describe, expect, it } from "vitest";
import { appForFile } from "../../support/app-per-file";

/*
 * A variantId is 1 to 32 of A-Z a-z 0-9 _ -, so "__proto__" matches the pattern. Code that counts a
 * drop's units in an object keyed by variant id (the rebuild) would set the object's prototype instead
 * of the variant's units: such ids are refused when the drop is created, and nothing is written.
 */
const app = appForFile();

describe("a variant named __proto__", () => {
  for (const variantId of ["__proto__", "constructor", "prototype"])
    it(`is refused at creation: ${variantId}`, async () => {
      const res = await app.api.admin("POST", "/sales", {
        productId: `proto-${variantId}-${Date.now()}`,
        name: "Proto",
        perUserLimit: 5,
        startsAt: new Date(Date.now() - 1000).toISOString(),
        endsAt: new Date(Date.now() + 3_600_000).toISOString(),
        paymentWindowSeconds: 600,
        variants: [
          { variantId, name: "Proto", priceCents: 1000, stock: 4 },
          { variantId: "M", name: "Medium", priceCents: 1200, stock: 5 },
        ],
      });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({
        error: {
          code: "INVALID_REQUEST",
          fields: { "variants.0.variantId": expect.stringContaining("reserved") },
        },
      });
      const { rows } = await app.db.query("select count(*)::int as n from sales where product_id like $1", [
        `proto-${variantId}-%`,
      ]);
      expect(rows[0]).toEqual({ n: 0 });
    });
});

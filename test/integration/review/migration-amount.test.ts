import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { appForFile } from "../../support/app-per-file";
import { shopperToken } from "../../support/shopper";

/*
 * drizzle/0013_sale_variants.sql on a database holding orders from before variants: each order's
 * amount_cents is set to quantity * the sale's price, in int4. A price the create body accepted
 * (up to 1,000,000,000 cents) times 3 units passes it: the migration stops, and the upgrade with it.
 */
const app = appForFile({ vars: { RATE_LIMIT_USER_PER_WINDOW: "1000", RATE_LIMIT_IP_PER_WINDOW: "100000" } });

const folder = join(import.meta.dirname, "../../../drizzle");
const statements = (file: string) =>
  readFileSync(join(folder, file), "utf8")
    .split("--> statement-breakpoint")
    .map((s) => s.trim())
    .filter((s) => s.length > 0);

describe("the variants migration on a database with orders", () => {
  it("upgrades an order of 3 units at 1,000,000,000 cents made before variants", async () => {
    // an order as the engine before variants wrote it (copied from this database, less the new columns)
    const sale = await app.api.createSale({ stock: 5, perUserLimit: 1, priceCents: 1_000_000_000 });
    const res = await app.api.call("POST", `/api/buy/${sale.productToken}`, {
      token: await shopperToken("old-rich"),
      body: { quantity: 1 },
    });
    expect(res.status).toBe(202);
    await app.drain();
    const saleRow = (await app.db.query("select * from sales where id = $1", [sale.saleId])).rows[0];
    const orderRow = (await app.db.query("select * from orders where sale_id = $1", [sale.saleId])).rows[0];
    delete saleRow.description;
    delete saleRow.image_url;
    delete orderRow.items;
    delete orderRow.amount_cents;
    delete orderRow.trace_parent; // drizzle/0015, after the migration under test
    orderRow.quantity = 3;

    const name = `review_mig_${Date.now()}`;
    await app.db.query(`create database ${name}`);
    const url = new URL(app.stack.vars.DATABASE_URL);
    url.pathname = `/${name}`;
    const db = new pg.Client({ connectionString: url.toString() });
    await db.connect();
    try {
      const files = readdirSync(folder)
        .filter((f) => /^\d{4}_.*\.sql$/.test(f))
        .sort();
      for (const file of files.filter((f) => f < "0013")) for (const s of statements(file)) await db.query(s);
      const insert = async (table: string, row: Record<string, unknown>) => {
        const cols = Object.keys(row);
        await db.query(
          `insert into ${table} (${cols.map((c) => `"${c}"`).join(", ")}) values (${cols.map((_, i) => `$${i + 1}`).join(", ")})`,
          cols.map((c) =>
            row[c] !== null && typeof row[c] === "object" && !(row[c] instanceof Date)
              ? JSON.stringify(row[c])
              : row[c],
          ),
        );
      };
      await insert("sales", saleRow);
      await db.query("alter table orders disable trigger user");
      await insert("orders", orderRow);
      await db.query("alter table orders enable trigger user");
      let failure: unknown = null;
      try {
        await db.query("begin");
        for (const s of statements("0013_sale_variants.sql")) await db.query(s);
        await db.query("commit");
      } catch (error) {
        failure = error;
        await db.query("rollback");
      }
      expect(String(failure ?? "")).toBe("");
    } finally {
      await db.end();
      await app.db.query(`drop database if exists ${name}`).catch(() => {});
    }
  });
});

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildDocument } from "../../client/build-document";
import { documentText, schemaText } from "../../client/codegen";

const client = join(import.meta.dirname, "../../client");
const committed = (name: string) => readFileSync(join(client, name), "utf8");

/** The typed client's types are the document's: a route changed without `npm run client:generate` fails here. */
describe("client/ types (npm run client:generate)", () => {
  it("client/openapi.json is the document the routes describe", async () => {
    const fresh = documentText(await buildDocument());
    expect(
      fresh === committed("openapi.json"),
      "client/openapi.json is stale: run `npm run client:generate`",
    ).toBe(true);
  });

  it("client/schema.d.ts is what openapi-typescript makes of it", async () => {
    const fresh = await schemaText(JSON.parse(committed("openapi.json")));
    expect(
      fresh === committed("schema.d.ts"),
      "client/schema.d.ts is stale: run `npm run client:generate`",
    ).toBe(true);
  });

  it("notices a drift", async () => {
    const document = await buildDocument();
    const paths = document.paths as Record<string, unknown>;
    delete paths["/api/sales"];
    expect(await schemaText(document)).not.toBe(committed("schema.d.ts"));
  });
});

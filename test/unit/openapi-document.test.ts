import { compileErrors, validate } from "@readme/openapi-parser";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";

/** The app without services: the document is built from the routes' descriptions alone. */
const app = createApp({
  services: () => {
    throw new Error("the document needs no services");
  },
  defer: () => () => {},
  clientIp: () => undefined,
});

async function document(): Promise<Record<string, unknown>> {
  const res = await app.request("/api/openapi.json");
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

describe("GET /api/openapi.json", () => {
  it("is an OpenAPI 3.1 document the parser accepts", async () => {
    const doc = await document();
    expect(doc.openapi).toBe("3.1.0");
    const result = await validate(structuredClone(doc) as never);
    if (!result.valid) throw new Error(compileErrors(result));
    expect(result.valid).toBe(true);
  });
});

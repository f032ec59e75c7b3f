import { compileErrors, validate } from "@readme/openapi-parser";
import { describe, expect, it } from "vitest";
import { createApp } from "../../../src/app";
import { appForFile } from "../../support/app-per-file";

/**
 * The document as the running engine serves it (workerd, Deno or Bun: a contract file): a valid
 * OpenAPI 3.1 document, and the very one the routes describe, byte for byte in JSON terms — the
 * bundling for a runtime must not change it (the integration suite checks every answer against it).
 */
const app = appForFile();

/** The document built from the source's routes in this process, without services. */
async function documentFromSource(): Promise<unknown> {
  const local = createApp({
    services: () => {
      throw new Error("the document needs no services");
    },
    defer: () => () => {},
    clientIp: () => undefined,
  });
  return (await local.request("/api/openapi.json")).json();
}

describe(`GET /api/openapi.json on ${process.env.FLASH_RUNTIME ?? "workers"}`, () => {
  it("is a JSON OpenAPI 3.1 document that @readme/openapi-parser accepts, the same the source describes", async () => {
    const res = await fetch(`${app.worker.url}/api/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const served = (await res.json()) as Record<string, unknown>;
    expect(served.openapi).toBe("3.1.0");
    const result = await validate(structuredClone(served) as never);
    if (!result.valid) throw new Error(compileErrors(result));
    expect(result.valid).toBe(true);
    expect(served).toEqual(await documentFromSource());
  });
});

import { createApp } from "../src/app";

/** The engine's OpenAPI document, built from its routes' descriptions (no server, no services). */
export async function buildDocument(): Promise<Record<string, unknown>> {
  const app = createApp({
    services: () => {
      throw new Error("the document needs no services");
    },
    defer: () => () => {},
    clientIp: () => undefined,
  });
  const res = await app.request("/api/openapi.json");
  if (res.status !== 200) throw new Error(`the document answered ${res.status}`);
  return (await res.json()) as Record<string, unknown>;
}

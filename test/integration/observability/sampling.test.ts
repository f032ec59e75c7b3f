import { InMemorySpanExporter } from "@opentelemetry/sdk-trace";
import { Hono } from "hono";
import { afterAll, describe, expect, it } from "vitest";
import { startTracingSdk } from "../../../src/runtime/tracing-sdk";
import { traced, traceHeaders } from "../../../src/tracing";

/**
 * Head sampling on Bun's SDK, through the engine's HTTP server spans: the ratio decides by trace id, for a
 * caller's `traceparent` as for a trace begun here, so a caller cannot make its requests traced by setting
 * the sampled flag, and a request left out makes no span below it and sends no trace context on.
 */
const exporter = new InMemorySpanExporter();
const tracing = startTracingSdk(
  { OTEL_SERVICE_NAME: "sampling-test", OTEL_TRACES_SAMPLER_ARG: 0.5 },
  exporter,
);
afterAll(() => tracing?.shutdown());

const app = new Hono();
if (tracing?.httpSpans) app.use(tracing.httpSpans);
app.get("/work", async (c) => {
  await traced("store call", {}, async () => undefined);
  return c.json(traceHeaders());
});

// the ratio sampler XORs the trace id's 32-bit words: ffffffff… is above half, 00000001… below it
const OUT = "ffffffff00000000000000000000000a";
const IN = "00000001000000000000000000000000";

describe("head sampling by trace id (the SDK on Bun)", () => {
  it("leaves out a caller's trace whose id the ratio leaves out, though it says sampled", async () => {
    const res = await app.request("/work", { headers: { traceparent: `00-${OUT}-00f067aa0ba902b7-01` } });
    expect(await res.json()).toEqual({});
    await tracing?.flush();
    expect(exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === OUT)).toEqual([]);
  });

  it("keeps a caller's trace whose id the ratio keeps, though it says not sampled", async () => {
    const res = await app.request("/work", { headers: { traceparent: `00-${IN}-00f067aa0ba902b7-00` } });
    const sent = (await res.json()) as { traceparent?: string };
    expect(sent.traceparent).toMatch(new RegExp(`^00-${IN}-[0-9a-f]{16}-01$`));
    await tracing?.flush();
    const names = exporter
      .getFinishedSpans()
      .filter((s) => s.spanContext().traceId === IN)
      .map((s) => s.name);
    expect(names.sort()).toEqual(["GET", "store call"]);
  });
});

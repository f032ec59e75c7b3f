import { InMemorySpanExporter } from "@opentelemetry/sdk-trace";
import { type Context, Hono } from "hono";
import { afterAll, describe, expect, it } from "vitest";
import { startTracingSdk } from "../../../src/runtime/tracing-sdk";
import { traced, traceHeaders } from "../../../src/tracing";

/**
 * Head sampling on Bun's SDK, through the engine's HTTP server spans: a shopper's request begins its own
 * trace (the caller's `traceparent` linked, never followed: a chosen trace id or flag cannot make it
 * traced); a job continues the trace it carries, the ratio deciding by its trace id, not its flag; a
 * request left out makes no span below it and sends no trace context on.
 */
const exporter = new InMemorySpanExporter();
const tracing = startTracingSdk(
  { OTEL_SERVICE_NAME: "sampling-test", OTEL_TRACES_SAMPLER_ARG: 0.5 },
  exporter,
);
afterAll(() => tracing?.shutdown());

const app = new Hono();
if (tracing?.httpSpans) app.use(tracing.httpSpans);
const work = async (c: Context) => {
  await traced("store call", {}, async () => undefined);
  return c.json(traceHeaders());
};
app.get("/work", work);
app.get("/api/jobs/work", work);

// the ratio sampler XORs the trace id's 32-bit words: ffffffff… is above half, 00000001… below it
const OUT = "ffffffff00000000000000000000000a";
const IN = "00000001000000000000000000000000";

describe("head sampling by trace id (the SDK on Bun)", () => {
  it("begins a shopper's request's own trace, whatever trace id and flag it sends", async () => {
    // IN's id would be kept by the ratio: followed, every request of a crowd sending it would be traced
    const answers = await Promise.all(
      Array.from({ length: 40 }, () =>
        app.request("/work", { headers: { traceparent: `00-${IN}-00f067aa0ba902b7-01` } }),
      ),
    );
    const sent = await Promise.all(answers.map((r) => r.json() as Promise<{ traceparent?: string }>));
    await tracing?.flush();
    const spans = exporter.getFinishedSpans();
    expect(spans.filter((s) => s.spanContext().traceId === IN)).toEqual([]);
    for (const context of sent) expect(context.traceparent ?? "").not.toContain(IN);
    // about half of 40 new traces kept at 0.5 (not all, not none), each linked to the caller's
    const kept = spans.filter((s) => s.name === "GET");
    expect(kept.length).toBeGreaterThan(5);
    expect(kept.length).toBeLessThan(35);
    for (const span of kept) expect(span.links[0]?.context.traceId).toBe(IN);
  });

  it("leaves out a job's trace whose id the ratio leaves out, though it says sampled", async () => {
    const res = await app.request("/api/jobs/work", {
      headers: { traceparent: `00-${OUT}-00f067aa0ba902b7-01` },
    });
    expect(await res.json()).toEqual({});
    await tracing?.flush();
    expect(exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === OUT)).toEqual([]);
  });

  it("keeps a job's trace whose id the ratio keeps, though it says not sampled", async () => {
    const res = await app.request("/api/jobs/work", {
      headers: { traceparent: `00-${IN}-00f067aa0ba902b7-00` },
    });
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

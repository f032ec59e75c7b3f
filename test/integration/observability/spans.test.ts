import { trace } from "@opentelemetry/api";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRedis } from "../../../local/redis-process";
import { startTracingSdk, type TracingHandle } from "../../../src/runtime/tracing-sdk";
import { releaseLockScript } from "../../../src/stock/lock";
import { runScript } from "../../../src/stock/script";
import { connectRedisTcp, type RedisTcpStore } from "../../../src/stores/redis-tcp";
import { statementKind } from "../../../src/stores/sql-spans";
import { continueTrace, traced, traceHeaders, tracingOn } from "../../../src/tracing";

/**
 * The engine's spans through the OpenTelemetry SDK the Bun entry starts, read from the SDK's in-memory
 * exporter: a script on a real redis-server, the trace context a message carries, a later step that
 * continues a stored trace, and nothing at all before tracing is on.
 */
const exporter = new InMemorySpanExporter();
let tracing: TracingHandle | null = null;
let redis: RedisTcpStore;
let stopRedis: () => Promise<void>;

beforeAll(async () => {
  const server = await startRedis({ port: 0 });
  stopRedis = () => server.stop();
  redis = connectRedisTcp(server.url);
});
afterAll(async () => {
  await tracing?.shutdown();
  await redis?.close();
  await stopRedis?.();
});

const settings = { OTEL_SERVICE_NAME: "spans-test", OTEL_TRACES_SAMPLER_ARG: 1 };

describe("the engine's spans (the SDK's in-memory exporter)", () => {
  it("records nothing and sends no context while tracing is off", async () => {
    expect(tracingOn()).toBe(false);
    expect(await runScript(redis, releaseLockScript, ["lock:off"], ["t"])).toBe(21);
    expect(traceHeaders()).toEqual({});
  });

  it("names a script's span by the script and its reply's code, under the caller's span", async () => {
    tracing = startTracingSdk(settings, exporter);
    expect(tracingOn()).toBe(true);
    let carried: Record<string, string> = {};
    // the request's span, as the HTTP middleware or the runtime makes it
    const inRequest = (work: () => Promise<void>) =>
      trace.getTracer("test").startActiveSpan("request", async (span) => {
        await work().finally(() => span.end());
      });
    await inRequest(async () => {
      await runScript(redis, releaseLockScript, ["lock:on"], ["t"]);
      carried = traceHeaders();
      await expect(
        traced("failing", {}, async () => {
          throw new Error("store down");
        }),
      ).rejects.toThrow("store down");
    });
    // outside any request (no span to be a child of): no span
    await traced("orphan", {}, async () => undefined);
    await continueTrace(carried.traceparent, "later step", { step: 1 }, async () => undefined);
    // the batch processor exports on its schedule, or when flushed
    await tracing?.flush();
    const spans = exporter.getFinishedSpans();
    const byName = new Map(spans.map((s) => [s.name, s]));
    const request = byName.get("request");
    const script = byName.get("EVALSHA release-lock");
    expect(script?.attributes).toMatchObject({
      "db.system.name": "redis",
      "flash_sale.script": "release-lock",
      "flash_sale.script.code": "NOT_HELD",
    });
    expect(script?.parentSpanContext?.spanId).toBe(request?.spanContext().spanId);
    expect(carried.traceparent).toBe(
      `00-${request?.spanContext().traceId}-${request?.spanContext().spanId}-01`,
    );
    const later = byName.get("later step");
    expect(later?.spanContext().traceId).toBe(request?.spanContext().traceId);
    expect(later?.parentSpanContext?.spanId).toBe(request?.spanContext().spanId);
    expect(byName.get("failing")?.status.code).toBe(2);
    expect(byName.has("orphan")).toBe(false);
    expect(byName.get("failing")?.events[0]?.name).toBe("exception");
  });

  it("names a statement by its kind, never by its values", () => {
    expect(statementKind("select 1")).toBe("SELECT");
    expect(statementKind("  update orders set x = $1")).toBe("UPDATE");
    expect(statementKind("with a as (select 1), ins as (insert into t select 1) select 1")).toBe(
      "WITH INSERT",
    );
    expect(statementKind("with a as (select 1) select * from a")).toBe("WITH SELECT");
  });
});

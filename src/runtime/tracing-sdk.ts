import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  trace,
} from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  BatchSpanProcessor,
  ParentBasedSampler,
  type SpanExporter,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import type { MiddlewareHandler } from "hono";
import { JOBS_MOUNT } from "../job-paths";
import { startTracing } from "../tracing";

/**
 * What a server entry needs of the tracing it started: the HTTP server span of each request where the
 * runtime makes none (Bun), and handing over the spans still buffered (now, and at shutdown).
 */
export type TracingHandle = {
  httpSpans?: MiddlewareHandler;
  /** the spans ended so far handed to the exporter now */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
};

/** The settings of tracing (src/runtime/server-settings.ts): where spans go, and which traces are kept. */
export type TracingSettings = {
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?: string;
  OTEL_SERVICE_NAME: string;
  OTEL_TRACES_SAMPLER_ARG: number;
  OTEL_DENO?: string;
};

/**
 * The OpenTelemetry SDK where the runtime has none of its own (Bun): W3C trace context, the request's
 * context carried through `await` by AsyncLocalStorage, head sampling by trace id (a ratio, applied to a
 * job's `traceparent` too: its trace id decides, not its flag), spans exported in batches over OTLP/HTTP (JSON) to
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or OTEL_EXPORTER_OTLP_ENDPOINT + `/v1/traces`. No endpoint: no
 * SDK, no spans (null). `exporter` replaces OTLP (the tests' in-memory exporter).
 *
 * @example
 * const tracing = startTracingSdk(settings); // at the entry, before the first request
 * await tracing?.shutdown(); // at exit: the buffered spans sent
 */
export function startTracingSdk(settings: TracingSettings, exporter?: SpanExporter): TracingHandle | null {
  const url =
    settings.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
    (settings.OTEL_EXPORTER_OTLP_ENDPOINT &&
      `${settings.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, "")}/v1/traces`);
  if (!url && !exporter) return null;
  const ratio = new TraceIdRatioBasedSampler(settings.OTEL_TRACES_SAMPLER_ARG);
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ "service.name": settings.OTEL_SERVICE_NAME }),
    // the ratio decides by trace id, for a trace begun here and for one a job brings alike: a buy and its
    // jobs (one trace id) decide the same; a job's "sampled" flag alone does not make it traced
    sampler: new ParentBasedSampler({
      root: ratio,
      remoteParentSampled: ratio,
      remoteParentNotSampled: ratio,
    }),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: exporter ?? new OTLPTraceExporter({ url }),
        scheduledDelayMillis: 1_000,
      }),
    ],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  startTracing();
  return {
    httpSpans: httpServerSpans(),
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}

/**
 * Deno's own OpenTelemetry (OTEL_DENO=true: the runtime registers its provider, traces `Deno.serve` and
 * `fetch`, exports OTLP/HTTP and reads the standard OTEL_* settings itself): the engine's spans on.
 */
export function useRuntimeTracing(settings: Pick<TracingSettings, "OTEL_DENO">): TracingHandle | null {
  if (settings.OTEL_DENO !== "true" && settings.OTEL_DENO !== "1") return null;
  startTracing({ fetchTraced: true });
  return { flush: async () => undefined, shutdown: async () => undefined };
}

const JOBS_PREFIX = `${JOBS_MOUNT}/`;

const fromHeaders: TextMapGetter<Headers> = {
  get: (headers, key) => headers.get(key) ?? undefined,
  keys: (headers) => [...headers.keys()],
};

/**
 * Each request's HTTP server span (the HTTP semantic conventions: `http.request.method`, `url.scheme`,
 * `http.response.status_code`; the app names it `METHOD route` and adds `http.route`, `url.full` without
 * secrets and the request id): a job's continues the `traceparent` it carries, any other request's
 * begins a trace, linked to the caller's. A request whose trace is not
 * sampled runs without a span in its context: nothing below it makes spans or sends a trace context, so
 * 99 requests in 100 at 1 % sampling cost one sampling decision. This is what `@hono/otel` does, less two
 * costs on every request, sampled or not: a copy of all its headers, and a context made active for it
 * (and the product token it would put in `url.full` until the app overwrote it).
 */
function httpServerSpans(): MiddlewareHandler {
  const tracer = trace.getTracer("flash-sale-edge");
  return async function httpServerSpan(c, next) {
    const sent = propagation.extract(ROOT_CONTEXT, c.req.raw.headers, fromHeaders);
    // a job QStash delivers continues the trace that published it; a shopper's request begins its own
    // (the caller's context linked, never followed: a caller must not choose the trace id, which decides
    // the sampling, nor what the shop's webhooks carry later)
    const job = c.req.path.startsWith(JOBS_PREFIX);
    const caller = trace.getSpanContext(sent);
    const parent = job ? sent : ROOT_CONTEXT;
    const span = tracer.startSpan(
      c.req.method,
      {
        kind: SpanKind.SERVER,
        attributes: {
          "http.request.method": c.req.method,
          "url.scheme": new URL(c.req.url).protocol.slice(0, -1),
        },
        links: !job && caller ? [{ context: caller }] : [],
      },
      parent,
    );
    if (!span.isRecording()) return next();
    try {
      await context.with(trace.setSpan(parent, span), next);
      span.setAttribute("http.response.status_code", c.res.status);
      if (c.res.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    } catch (error) {
      span.recordException(error instanceof Error ? error : String(error));
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      span.end();
    }
  };
}

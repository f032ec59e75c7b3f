import {
  type Attributes,
  type Context,
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  trace,
} from "@opentelemetry/api";

/**
 * The engine's own spans: a store call, a publish, a provider call, each a child of the request's span.
 * They go through the OpenTelemetry API to whatever tracer provider the runtime registered (Bun: the
 * SDK, `runtime/tracing-sdk.ts`; Deno: its built-in OpenTelemetry); the entry turns them on with
 * {@link startTracing}. Off (the default, and always on Workers, whose traces Cloudflare records), every
 * helper here is one boolean read: the buy path costs what it cost without tracing.
 */
let on = false;
/** Whether the runtime's own `fetch` sends the current trace context (Deno's OpenTelemetry does). */
let fetchSendsContext = false;

/**
 * Turns the engine's spans on: the runtime entry, once a tracer provider is registered; `fetchTraced`
 * when the runtime's `fetch` makes a span and sends `traceparent` itself.
 */
export function startTracing(options: { fetchTraced?: boolean } = {}): void {
  on = true;
  fetchSendsContext = options.fetchTraced ?? false;
}

/** Whether this process records the engine's spans. */
export function tracingOn(): boolean {
  return on;
}

const tracer = () => trace.getTracer("flash-sale-edge");

/**
 * `work` inside a client span `name` with `attributes` (the store call's kind, its statement or script),
 * ended when it settles: an error recorded on it, and `outcome(result)`'s attributes added (a script's
 * return code). With tracing off, or in a request whose trace is not sampled: `work()` as it is.
 *
 * @example
 * await traced("EVALSHA reserve-stock", { "db.system.name": "redis" }, () => redis.evalsha(…), (r) => ({ "flash_sale.code": r[0] }));
 */
export function traced<T>(
  name: string,
  attributes: Attributes,
  work: () => Promise<T>,
  outcome?: (result: T) => Attributes,
): Promise<T> {
  // a request whose trace is not sampled (or work outside any request) makes no span at all: its
  // children would not be recorded either, and a span and its context cost on every store call
  if (!inSampledTrace()) return work();
  return tracer().startActiveSpan(name, { kind: SpanKind.CLIENT, attributes }, (span) =>
    ended(span, work, outcome),
  );
}

/**
 * Whether the current context is a sampled trace's (its span may have ended: a buy's publish runs after
 * the buy answered, and is still the buy's step). False with tracing off.
 */
export function inSampledTrace(): boolean {
  if (!on) return false;
  const span = trace.getActiveSpan();
  return span !== undefined && (span.spanContext().traceFlags & TraceFlags.SAMPLED) !== 0;
}

/**
 * `work` as a step of an earlier trace (an order's, whose `traceparent` the order row keeps): a span
 * `name` whose parent is that context and which links the request that runs it (a provider's webhook
 * has a trace of its own). Without a stored context, as {@link traced}: a child of the current span when
 * its trace is sampled.
 */
export function continueTrace<T>(
  traceParent: string | null | undefined,
  name: string,
  attributes: Attributes,
  work: () => Promise<T>,
): Promise<T> {
  if (!on) return work();
  if (!traceParent) return traced(name, attributes, work);
  const here = trace.getActiveSpan()?.spanContext();
  const parent = traceParent
    ? propagation.extract(ROOT_CONTEXT, { traceparent: traceParent })
    : context.active();
  return tracer().startActiveSpan(
    name,
    { kind: SpanKind.INTERNAL, attributes, links: here ? [{ context: here }] : [] },
    parent,
    (span) => ended(span, work),
  );
}

/**
 * The trace context to send with what leaves the process (a QStash job, a webhook POST): `traceparent`
 * (and `tracestate`) of the current span, or nothing with tracing off or no span sampled.
 *
 * @example
 * await fetch(url, { headers: { ...traceHeaders(), "content-type": "application/json" }, body });
 */
export function traceHeaders(at: Context = context.active()): Record<string, string> {
  if (!on) return {};
  const carrier: Record<string, string> = {};
  propagation.inject(at, carrier);
  return carrier;
}

/**
 * The trace context for a request the engine itself sends (a webhook POST): {@link traceHeaders}, unless
 * the runtime's `fetch` adds it already (a second `traceparent` would make the header a list).
 */
export function fetchTraceHeaders(): Record<string, string> {
  return fetchSendsContext ? {} : traceHeaders();
}

/** The current `traceparent`, to keep with what outlives the request (an order row); null when off. */
export function currentTraceParent(): string | null {
  return on ? (traceHeaders().traceparent ?? null) : null;
}

/** Attributes on the current span (the request's: its request id, a buy's outcome code), when on; and its name. */
export function annotate(attributes: Attributes, name?: string): void {
  if (!on) return;
  const span = trace.getActiveSpan();
  span?.setAttributes(attributes);
  if (name) span?.updateName(name);
}

/** `work` in `span`: its outcome's attributes added, an error recorded, the span ended when it settles. */
async function ended<T>(span: Span, work: () => Promise<T>, outcome?: (result: T) => Attributes): Promise<T> {
  try {
    const result = await work();
    if (outcome) span.setAttributes(outcome(result));
    return result;
  } catch (error) {
    span.recordException(error instanceof Error ? error : String(error));
    span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.name : undefined });
    throw error;
  } finally {
    span.end();
  }
}

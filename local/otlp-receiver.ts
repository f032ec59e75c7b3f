/**
 * A stand-in for an OpenTelemetry collector on loopback: it takes OTLP/HTTP in JSON (`POST /v1/traces`,
 * and `/v1/metrics`, `/v1/logs`, which it only counts) as the engine's SDK (Bun) and Deno's own
 * OpenTelemetry send it (`OTEL_EXPORTER_OTLP_PROTOCOL=http/json` on Deno), and keeps the spans for a
 * test or a person to read (`GET /spans`). Protobuf bodies are answered 415 with what to set instead.
 *
 * @example
 * const otlp = await startOtlpReceiver();
 * // engine: OTEL_EXPORTER_OTLP_ENDPOINT=otlp.url
 * const spans = otlp.spans().filter((s) => s.traceId === id);
 */
import { createServer } from "node:http";
import { closeServer, listen, readBody } from "./http-util";
import { LOOPBACK } from "./ports";

/** A span as the receiver keeps it: ids in hex, attributes as plain values. */
export type ReceivedSpan = {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  service: string;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string }[];
  status: number;
};

type AnyValue = {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
};
type KeyValue = { key: string; value?: AnyValue };
type OtlpSpan = {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind?: number;
  attributes?: KeyValue[];
  links?: { traceId: string; spanId: string }[];
  status?: { code?: number };
};
type TracesRequest = {
  resourceSpans?: { resource?: { attributes?: KeyValue[] }; scopeSpans?: { spans?: OtlpSpan[] }[] }[];
};

export type OtlpReceiver = {
  url: string;
  spans(): ReceivedSpan[];
  /** how many requests each signal's path got */
  counts(): Record<string, number>;
  close(): Promise<void>;
};

function plain(value: AnyValue | undefined): unknown {
  if (!value) return undefined;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  return value.boolValue;
}

function attributes(list: KeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, plain(kv.value)]));
}

function spansOf(request: TracesRequest): ReceivedSpan[] {
  return (request.resourceSpans ?? []).flatMap((rs) => {
    const service = String(attributes(rs.resource?.attributes)["service.name"] ?? "");
    return (rs.scopeSpans ?? []).flatMap((ss) =>
      (ss.spans ?? []).map((s) => ({
        traceId: s.traceId,
        spanId: s.spanId,
        parentSpanId: s.parentSpanId ?? "",
        name: s.name,
        kind: s.kind ?? 0,
        service,
        attributes: attributes(s.attributes),
        links: (s.links ?? []).map((l) => ({ traceId: l.traceId, spanId: l.spanId })),
        status: s.status?.code ?? 0,
      })),
    );
  });
}

export async function startOtlpReceiver(port?: number): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const counts: Record<string, number> = {};
  const server = createServer(async (req, res) => {
    const path = req.url ?? "/";
    if (req.method === "GET" && path === "/spans") {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(spans));
      return;
    }
    if (req.method !== "POST" || !["/v1/traces", "/v1/metrics", "/v1/logs"].includes(path)) {
      res.writeHead(404).end();
      return;
    }
    const body = await readBody(req);
    if (!String(req.headers["content-type"]).startsWith("application/json")) {
      res
        .writeHead(415, { "content-type": "text/plain" })
        .end("send OTLP as JSON: OTEL_EXPORTER_OTLP_PROTOCOL=http/json");
      return;
    }
    counts[path] = (counts[path] ?? 0) + 1;
    try {
      if (path === "/v1/traces") spans.push(...spansOf(JSON.parse(body.toString("utf8")) as TracesRequest));
    } catch {
      res.writeHead(400).end();
      return;
    }
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
  const chosen = await listen(server, port);
  return {
    url: `http://${LOOPBACK}:${chosen}`,
    spans: () => [...spans],
    counts: () => ({ ...counts }),
    close: () => closeServer(server),
  };
}

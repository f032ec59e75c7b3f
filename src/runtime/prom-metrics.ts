import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { Memory } from "../memory/memory";
import type { StreamKind } from "../memory/stream-budgets";
import type { MetricsExposition } from "../routes/metrics";
import type { Metrics } from "../services";

/** Request durations' buckets, in seconds: a buy answers in about a millisecond, a slow store in seconds. */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

const STREAM_KINDS: readonly StreamKind[] = ["sale", "order", "ticket", "operator"];

/**
 * The process's metrics in a Prometheus registry of its own (prom-client; server runtimes only, the
 * Workers bundle never imports it): the {@link Metrics} the engine calls, each label set's child looked
 * up once and kept, and the exposition `GET /metrics` serves. The open streams are read from the
 * memory at scrape time (`watch`), nothing is counted for them on the way.
 *
 * @example
 * const prom = createPromMetrics();
 * const services = createServices(config, { metrics: prom.metrics });
 * prom.watch(services.memory);
 * createApp({ ..., metrics: prom.exposition });
 */
export function createPromMetrics() {
  const registry = new Registry();
  const requests = new Counter({
    name: "flashsale_http_requests_total",
    help: "Requests answered, by route pattern, method and status.",
    labelNames: ["route", "method", "status"] as const,
    registers: [registry],
  });
  const durations = new Histogram({
    name: "flashsale_http_request_duration_seconds",
    help: "Time to the response (a stream's: to its headers), by route pattern.",
    labelNames: ["route"] as const,
    buckets: DURATION_BUCKETS,
    registers: [registry],
  });
  const buyOutcomes = new Counter({
    name: "flashsale_buy_outcomes_total",
    help: "Answers to POST /api/buy/:productToken: ADMITTED (202) or the error code, the front door's from memory included.",
    labelNames: ["code"] as const,
    registers: [registry],
  });
  const units = new Counter({
    name: "flashsale_admitted_units_total",
    help: "Units reserved by admitted buys (an idempotent replay not counted again).",
    registers: [registry],
  });
  const deliveries = new Counter({
    name: "flashsale_webhook_deliveries_total",
    help: "Webhook delivery jobs, by outcome: delivered, failed (QStash retries; dead-lettered when out of retries), gone (endpoint removed).",
    labelNames: ["outcome"] as const,
    registers: [registry],
  });
  const storeErrors = new Counter({
    name: "flashsale_store_errors_total",
    help: "Requests answered 503 because a store failed them, by store.",
    labelNames: ["store"] as const,
    registers: [registry],
  });
  let memory: Memory | null = null;
  new Gauge({
    name: "flashsale_open_streams",
    help: "Event streams open in this process, by kind (sale, order, ticket, operator).",
    labelNames: ["kind"] as const,
    registers: [registry],
    collect() {
      const now = Date.now();
      for (const kind of STREAM_KINDS) this.set({ kind }, memory?.streams.count(now, kind) ?? 0);
    },
  });

  const requestChildren = new Map<string, Counter.Internal>();
  const durationChildren = new Map<string, Histogram.Internal<"route">>();
  const outcomeChildren = new Map<string, Counter.Internal>();
  const metrics: Metrics = {
    request(route, method, status, seconds) {
      const key = `${method} ${status} ${route}`;
      let counter = requestChildren.get(key);
      if (!counter) {
        counter = requests.labels(route, method, String(status));
        requestChildren.set(key, counter);
      }
      counter.inc();
      let histogram = durationChildren.get(route);
      if (!histogram) {
        histogram = durations.labels(route);
        durationChildren.set(route, histogram);
      }
      histogram.observe(seconds);
    },
    buyOutcome(code) {
      let counter = outcomeChildren.get(code);
      if (!counter) {
        counter = buyOutcomes.labels(code);
        outcomeChildren.set(code, counter);
      }
      counter.inc();
    },
    unitsAdmitted(n) {
      units.inc(n);
    },
    webhookDelivery(outcome) {
      deliveries.inc({ outcome });
    },
    storeError(store) {
      storeErrors.inc({ store });
    },
  };
  const exposition: MetricsExposition = {
    contentType: registry.contentType,
    render: () => registry.metrics(),
  };
  return {
    metrics,
    exposition,
    /** Reads the open streams from this memory at each scrape. */
    watch(m: Memory): void {
      memory = m;
    },
  };
}

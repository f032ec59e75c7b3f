import type { Db } from "./db/client";
import type { Config } from "./env";
import type { Memory } from "./memory/memory";
import type { PaymentProvider } from "./payments/payment-provider";
import type { QStashPublisher } from "./stores/qstash-publisher";
import type { RedisStore } from "./stores/redis-store";

/** Hands a promise over to be finished after the response; its failure is logged, never thrown. */
export type Defer = (task: Promise<unknown>) => void;

/**
 * What the engine runs on, built once per isolate (Workers) or process (Deno, Bun) from the parsed
 * settings (src/runtime/create-services.ts) and handed to the app and the scheduled handler: nothing
 * below builds a client itself.
 */
export type Services = {
  config: Config;
  /** Redis, with EVALSHA / EVAL for the Lua scripts (src/stock/script.ts). */
  redis: RedisStore;
  db: Db;
  /** Publishes the order pipeline's jobs (src/orders/enqueue-order.ts); each publish times out. */
  qstash: QStashPublisher;
  /** What this isolate or process remembers between requests (src/memory/memory.ts). */
  memory: Memory;
  /** The hosted checkout's provider when PAYMENT_PROVIDER=stripe, else null (src/payments/). */
  payments: PaymentProvider | null;
  /** Milliseconds since the epoch (the store's clock is src/stores/store-clock.ts). */
  clock: () => number;
  /**
   * The addresses a host name resolves to here (server runtimes, node:dns), for the webhook delivery's
   * check of its target (src/webhooks/endpoint-target.ts); null on Workers, whose fetch cannot reach
   * the shop's private network.
   */
  resolveHost: ResolveHost | null;
  /** Which drivers were chosen (logged at start by server runtimes). */
  drivers: { redis: "upstash-rest" | "tcp" | "tcp-cluster"; db: "neon-http" | "tcp" };
  /** What the process counts for its `/metrics` (server runtimes); absent on Workers, where nothing is counted. */
  metrics?: Metrics;
  /** Closes what holds connections (server runtimes, on shutdown). */
  close(): Promise<void>;
};

/**
 * The engine's counts, as plain calls (src/runtime/prom-metrics.ts records them for Prometheus on Deno
 * and Bun). Each call is a counter's increment: cheap enough for the buy's hot path.
 */
export type Metrics = {
  /** One answered request: its route pattern (`/api/buy/:productToken`), method, status and duration in seconds. */
  request(route: string, method: string, status: number, seconds: number): void;
  /** One answer to a buy: `ADMITTED` (202) or the contract's error code. */
  buyOutcome(code: string): void;
  /** Units a first (not replayed) 202 reserved. */
  unitsAdmitted(units: number): void;
  /** One webhook delivery job's outcome (src/webhooks/deliver.ts). */
  webhookDelivery(outcome: "delivered" | "failed" | "gone"): void;
  /** A request answered 503 because a store failed it. */
  storeError(store: string): void;
};

/** What one request or one scheduled run works with: the services, its clock reading, its background runner. */
export type Deps = Omit<Services, "close" | "clock" | "drivers"> & { now: number; defer: Defer };

/** What publishing the order pipeline's jobs needs: the settings (job URLs) and QStash (src/orders/enqueue-order.ts). */
export type PublishDeps = Pick<Services, "config" | "qstash">;

/** What writing and publishing webhook events needs: Postgres (endpoints, outbox), the settings and QStash (src/webhooks/). */
export type WebhookDeps = Pick<Deps, "db" | "config" | "qstash">;

/** What announcing a sale's change to its webhooks needs: the sale read from Redis at one instant (src/webhooks/sale-status.ts). */
export type AnnounceDeps = WebhookDeps & Pick<Deps, "redis">;

/** What a buy's refusal from memory needs: the settings, the memory, Redis and the background runner (for the chart's count) (src/buy/refusal-from-memory.ts). */
export type MemoryRefusalDeps = Pick<Deps, "config" | "memory" | "redis" | "defer">;

/** What delivering webhook messages needs: the endpoints, the settings, how names resolve (src/webhooks/deliver.ts). */
export type WebhookDeliveryDeps = Pick<Deps, "db" | "config" | "resolveHost">;

/** What delivering outbox entries from the process that wrote them needs: endpoints, QStash for what is left (src/webhooks/deliver-inline.ts). */
export type InlineDeliveryDeps = Pick<Deps, "db" | "config" | "qstash" | "resolveHost" | "metrics">;

/** What an order's lifecycle needs (write, pay, cancel, expire, restore: src/orders/). */
export type LifecycleDeps = Pick<Deps, "redis" | "db" | "now" | "config" | "qstash" | "memory">;

/** What taking payments needs: an order's lifecycle, the provider, a background runner (src/payments/). */
export type PaymentDeps = LifecycleDeps & Pick<Deps, "payments" | "defer">;

/** What reading one order for its owner needs: the stores, and what the process already knows (src/orders/order-reads.ts). */
export type OrderReadDeps = Pick<Deps, "redis" | "db" | "memory" | "now">;

/** What checking a shopper token needs: the settings, and the shop's key set as this process knows it (src/identity/). */
export type IdentityDeps = Pick<Deps, "config" | "memory">;

/** What the shopper routes' request limits need: counts in memory, the store past the local share (src/limits/). */
export type LimitDeps = Pick<Deps, "config" | "redis" | "memory" | "now" | "defer">;

/** What rebuilding a sale's Redis state from Postgres needs (src/recovery/). */
export type RebuildDeps = LifecycleDeps & Partial<Pick<Deps, "defer">>;

/** What a sale's stats reading needs: the stores and the process's memory (src/recovery/sale-stats.ts). */
export type StatsDeps = Pick<Deps, "redis" | "db" | "memory">;

/** What a reconciliation run needs (src/recovery/reconcile-sale.ts). */
export type ReconcileDeps = Pick<Deps, "redis" | "db" | "config" | "qstash" | "now" | "memory">;

/** The addresses (IPv4 or IPv6 text) a host name resolves to. */
export type ResolveHost = (host: string) => Promise<string[]>;

/** The deps of one request or scheduled run: the services, read at `now`, deferring to `defer`. */
export function depsAt(services: Services, defer: Defer): Deps {
  const { close: _close, clock, drivers: _drivers, ...rest } = services;
  return { ...rest, now: clock(), defer };
}

import { z } from "zod";
import {
  STREAM_DEFAULTS,
  STREAMS_PER_IP,
  STREAMS_PER_USER,
  TICKET_STREAMS_PER_USER,
} from "./stream-defaults";

/** The worker's bindings: secrets and vars from wrangler.toml / .dev.vars, plus the assets binding. */
export type Env = {
  ASSETS?: Fetcher;
  JWT_SECRET: string;
  JWT_ISSUER?: string;
  JWT_AUDIENCE?: string;
  JWT_JWKS_URL?: string;
  JWT_JWKS_CACHE_SECONDS?: string;
  JWT_JWKS_COOLDOWN_SECONDS?: string;
  ADMIN_TOKEN: string;
  OPERATOR_TOKENS?: string;
  OPERATOR_JWT_AUDIENCE?: string;
  OPERATOR_ROLE_CLAIM?: string;
  PRODUCT_TOKEN_SECRET: string;
  UPSTASH_REDIS_REST_URL?: string;
  UPSTASH_REDIS_REST_TOKEN?: string;
  UPSTASH_REDIS_REST_URLS?: string;
  UPSTASH_REDIS_REST_TOKENS?: string;
  REDIS_URL?: string;
  REDIS_CLUSTER_NODES?: string;
  REDIS_REPLICA_ACKS?: string;
  REDIS_REPLICA_ACK_TIMEOUT_MS?: string;
  QSTASH_URL?: string;
  QSTASH_TOKEN: string;
  QSTASH_CURRENT_SIGNING_KEY: string;
  QSTASH_NEXT_SIGNING_KEY: string;
  DATABASE_URL: string;
  NEON_HTTP_ENDPOINT?: string;
  DATABASE_DRIVER?: string;
  PUBLIC_URL: string;
  DEV_LOGIN?: string;
  RATE_LIMIT_USER_PER_WINDOW?: string;
  RATE_LIMIT_IP_PER_WINDOW?: string;
  RATE_LIMIT_WINDOW_SECONDS?: string;
  SHOPPER_LIMIT_USER_PER_WINDOW?: string;
  SHOPPER_LIMIT_IP_PER_WINDOW?: string;
  IPV6_PREFIX_BITS?: string;
  SOLD_OUT_CACHE_MS?: string;
  CATALOG_REFRESH_MS?: string;
  STORE_CLOCK_REFRESH_MS?: string;
  OUTBOX_GRACE_SECONDS?: string;
  RECOVERY_QUIET_SECONDS?: string;
  LEDGER_TRIM_AFTER_SECONDS?: string;
  RECONCILE_CHUNK?: string;
  REALTIME_MAX_STREAMS?: string;
  REALTIME_MAX_ORDER_STREAMS?: string;
  REALTIME_MAX_STREAMS_PER_IP?: string;
  REALTIME_MAX_STREAMS_PER_USER?: string;
  REALTIME_MAX_TICKET_STREAMS?: string;
  REALTIME_MAX_TICKET_STREAMS_PER_USER?: string;
  REALTIME_REFRESH_MS?: string;
  REALTIME_PING_MS?: string;
  LOG_SAMPLE_RATE?: string;
  BUY_RESOLVE_WINDOW_MS?: string;
  WEBHOOK_DELIVERY_RETRIES?: string;
  WEBHOOK_ALLOW_PRIVATE_TARGETS?: string;
  WEBHOOK_INLINE_POSTS?: string;
  PAYMENT_PROVIDER?: string;
  CURRENCY?: string;
  STRIPE_SECRET_KEY?: string;
  STRIPE_WEBHOOK_SECRET?: string;
  STRIPE_API_BASE?: string;
  ADMISSION_SECRET?: string;
  ADMISSION_WINDOW_SECONDS?: string;
  ALTCHA_HMAC_KEY?: string;
  ALTCHA_MAX_NUMBER?: string;
};

const secret = z.string().min(8);
const optionalText = z
  .string()
  .optional()
  .transform((v) => v?.trim() || undefined);
/** An operator's name and role; `read` may only GET the operator routes. */
export type Operator = { name: string; role: "admin" | "read" };

const operatorEntry = /^([a-z0-9_-]{1,32}):([^:,\s]{16,}):(admin|read)$/;

/** `name:token:role,…` → the named operators with their tokens; undefined when one entry is malformed or repeated. */
function parseOperatorTokens(text: string): (Operator & { token: string })[] | undefined {
  const entries = text.split(",").map((e) => operatorEntry.exec(e.trim()));
  if (entries.some((m) => !m)) return undefined;
  const operators = entries.map((m) => ({
    name: m?.[1] ?? "",
    token: m?.[2] ?? "",
    role: (m?.[3] ?? "read") as Operator["role"],
  }));
  const unique = (values: string[]) => new Set(values).size === values.length;
  return unique(operators.map((o) => o.name)) && unique(operators.map((o) => o.token))
    ? operators
    : undefined;
}

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);

/** Whether a URL's host is this machine's loopback: `localhost`, 127.0.0.0/8 (in any spelling a URL takes), `[::1]`. */
function isLoopbackUrl(url: string): boolean {
  const host = new URL(url).hostname.replace(/\.+$/, "");
  return host === "localhost" || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

const configSchema = z
  .object({
    JWT_SECRET: secret,
    JWT_ISSUER: optionalText,
    JWT_AUDIENCE: optionalText,
    /**
     * The shop's key set (JWKS): RS256 / ES256 / EdDSA shopper tokens are verified against it, beside HS256
     * with JWT_SECRET; JWT_ISSUER and JWT_AUDIENCE are then required (src/identity/key-set.ts).
     */
    JWT_JWKS_URL: z.url().optional(),
    /** how long fetched keys are used before the key set is read again (kept past that while it is down) */
    JWT_JWKS_CACHE_SECONDS: positiveInt(600),
    /** the least time between two reads of the key set, whatever unknown key ids tokens name */
    JWT_JWKS_COOLDOWN_SECONDS: z.coerce.number().min(0).default(30),
    ADMIN_TOKEN: secret,
    /**
     * Named operators beside ADMIN_TOKEN (the operator `admin`, role admin): `name:token:role,…`, names
     * `[a-z0-9_-]{1,32}`, tokens of 16 characters or more, roles `admin` or `read` (GET only). The audit
     * log records the name (src/middleware/admin-auth.ts).
     */
    OPERATOR_TOKENS: z
      .string()
      .optional()
      .transform((v, ctx) => {
        if (!v?.trim()) return [];
        const operators = parseOperatorTokens(v);
        if (!operators) ctx.addIssue({ code: "custom", message: "name:token:role, names and tokens unique" });
        return operators ?? [];
      }),
    /**
     * Operators signing in with the shop's own sign-in (the key set at JWT_JWKS_URL, `iss` JWT_ISSUER):
     * tokens for this audience (never JWT_AUDIENCE: a shopper's token is never an operator's), their role
     * (`admin` or `read`) in the claim OPERATOR_ROLE_CLAIM; the operator is `idp:<sub>` in the audit log.
     */
    OPERATOR_JWT_AUDIENCE: optionalText,
    OPERATOR_ROLE_CLAIM: z
      .string()
      .regex(/^[A-Za-z0-9_:./-]{1,128}$/)
      .default("flash_sale_role"),
    PRODUCT_TOKEN_SECRET: secret,
    /** Redis over Upstash's REST API (every runtime) … */
    UPSTASH_REDIS_REST_URL: z.url().optional(),
    UPSTASH_REDIS_REST_TOKEN: z.string().min(1).optional(),
    /**
     * … or several Upstash databases, each sale in one of them (src/stores/sharded-store.ts):
     * comma-separated URLs and their tokens in the same order; they replace the two above
     */
    UPSTASH_REDIS_REST_URLS: z
      .string()
      .refine((v) => v.split(",").every((u) => URL.canParse(u.trim())), "comma-separated URLs")
      .optional(),
    UPSTASH_REDIS_REST_TOKENS: z.string().min(1).optional(),
    /** … or over TCP, `redis://` / `rediss://` (server runtimes only; wins when set): see src/runtime/create-services.ts. */
    REDIS_URL: z
      .string()
      .regex(/^rediss?:\/\//)
      .optional(),
    /** … or a Redis Cluster: its seed nodes, comma-separated `redis://` / `rediss://` URLs (server runtimes only). */
    REDIS_CLUSTER_NODES: z
      .string()
      .regex(/^rediss?:\/\/[^,\s]+(,\s*rediss?:\/\/[^,\s]+)*$/, "comma-separated redis:// or rediss:// URLs")
      .optional(),
    /**
     * With REDIS_URL or REDIS_CLUSTER_NODES: how many replicas must hold a script's writes before its
     * reply counts (WAIT on the node that ran it). 0: the master's word is enough (a failover may lose
     * its last writes). See docs/scaling.md.
     */
    REDIS_REPLICA_ACKS: z.coerce.number().int().min(0).max(8).default(0),
    /** how long a script waits for REDIS_REPLICA_ACKS replicas before its outcome counts as unknown */
    REDIS_REPLICA_ACK_TIMEOUT_MS: z.coerce
      .number()
      .int()
      .positive()
      .max(1_000, "at most 1000: every command waits behind a batch's WAIT, within the 2 s command timeout")
      .default(250),
    QSTASH_URL: z.url().optional(),
    QSTASH_TOKEN: z.string().min(1),
    QSTASH_CURRENT_SIGNING_KEY: z.string().min(1),
    QSTASH_NEXT_SIGNING_KEY: z.string().min(1),
    DATABASE_URL: z.string().min(1),
    NEON_HTTP_ENDPOINT: z.url().optional(),
    /** `http` (Neon's SQL over HTTP) or `tcp` (a pool); unset: see `databaseDriver` in src/runtime/create-services.ts. */
    DATABASE_DRIVER: z.enum(["http", "tcp"]).optional(),
    PUBLIC_URL: z.url().transform((u) => u.replace(/\/+$/, "")),
    DEV_LOGIN: z
      .string()
      .optional()
      .transform((v) => v === "true"),
    RATE_LIMIT_USER_PER_WINDOW: positiveInt(20),
    RATE_LIMIT_IP_PER_WINDOW: positiveInt(2000),
    RATE_LIMIT_WINDOW_SECONDS: positiveInt(1),
    /**
     * Requests per window (RATE_LIMIT_WINDOW_SECONDS) one shopper may send to each shopper route other than
     * buy (order reads, pay, cancel, stream openings), and one client address to each shopper route
     * (sale reads included): src/limits/route-limits.ts. The buy keeps its own, inside its script.
     */
    SHOPPER_LIMIT_USER_PER_WINDOW: positiveInt(20),
    SHOPPER_LIMIT_IP_PER_WINDOW: positiveInt(2000),
    /**
     * How much of an IPv6 address names one client in every per-address count (limits, stream budgets):
     * its first IPV6_PREFIX_BITS bits, a /64 by default (src/limits/client-key.ts). IPv4 counts per address.
     */
    IPV6_PREFIX_BITS: z.coerce.number().int().min(1).max(128).default(64),
    SOLD_OUT_CACHE_MS: z.coerce.number().int().min(0).default(1000),
    CATALOG_REFRESH_MS: positiveInt(5000),
    STORE_CLOCK_REFRESH_MS: positiveInt(60_000),
    OUTBOX_GRACE_SECONDS: positiveInt(10),
    RECOVERY_QUIET_SECONDS: z.coerce.number().int().min(0).default(30),
    LEDGER_TRIM_AFTER_SECONDS: z.coerce.number().int().min(0).default(86_400),
    /** ledger entries and orders one reconciliation run checks (each), whatever the sale's size */
    RECONCILE_CHUNK: positiveInt(2_000),
    /** anonymous sale streams (sale and sale-list) per isolate or process; Deno and Bun default higher */
    REALTIME_MAX_STREAMS: positiveInt(STREAM_DEFAULTS.workers.sale),
    /** order streams per isolate or process, a budget apart from the sale streams' */
    REALTIME_MAX_ORDER_STREAMS: positiveInt(STREAM_DEFAULTS.workers.order),
    /** sale streams one client address may hold per isolate or process */
    REALTIME_MAX_STREAMS_PER_IP: positiveInt(STREAMS_PER_IP),
    /** order streams one shopper may hold per isolate or process */
    REALTIME_MAX_STREAMS_PER_USER: positiveInt(STREAMS_PER_USER),
    /** ticket streams (a waiting room's, GET …/queue/events) per isolate or process, a budget apart */
    REALTIME_MAX_TICKET_STREAMS: positiveInt(STREAM_DEFAULTS.workers.ticket),
    /** ticket streams one waiter may hold per isolate or process */
    REALTIME_MAX_TICKET_STREAMS_PER_USER: positiveInt(TICKET_STREAMS_PER_USER),
    REALTIME_REFRESH_MS: positiveInt(250),
    /** a `: ping` after this long without a write; on workerd also how soon a disconnect is noticed */
    REALTIME_PING_MS: positiveInt(STREAM_DEFAULTS.workers.pingMs),
    /** the share of requests (0 to 1) that write a structured log line; answers of 500 or more always do */
    LOG_SAMPLE_RATE: z.coerce.number().min(0).max(1).default(0.01),
    /** how long a buy attempt may spend learning its outcome before it is voided (reserve-stock.ts) */
    BUY_RESOLVE_WINDOW_MS: positiveInt(8_000),
    /** QStash retries of a webhook delivery job (with its backoff) before it is dead-lettered (src/webhooks/) */
    WEBHOOK_DELIVERY_RETRIES: z.coerce.number().int().min(0).default(5),
    WEBHOOK_INLINE_POSTS: z.coerce.number().int().min(0).max(10_000).default(200),
    /**
     * `true`: webhook endpoints may be loopback, private or link-local addresses and `localhost` names
     * (the local stack's receivers); else they are refused at registration and at delivery
     * (src/webhooks/endpoint-target.ts).
     */
    WEBHOOK_ALLOW_PRIVATE_TARGETS: z
      .enum(["true", "false"])
      .default("false")
      .transform((v) => v === "true"),
    /**
     * Who decides "paid" (src/payments/): `stripe` (Checkout and its signed webhook), `manual` (the shop's
     * back end, POST /api/admin/orders/:orderId/payment), or `local` (the shopper's own /pay: local
     * development only, so only with a loopback PUBLIC_URL). Unset: `manual`.
     */
    PAYMENT_PROVIDER: z.enum(["stripe", "manual", "local"]).default("manual"),
    /** The currency of every sale's prices (ISO 4217, lower case), what a payment must be made in. */
    CURRENCY: z
      .string()
      .regex(/^[a-zA-Z]{3}$/)
      .default("usd")
      .transform((v) => v.toLowerCase()),
    STRIPE_SECRET_KEY: optionalText,
    STRIPE_WEBHOOK_SECRET: optionalText,
    /** Where the Stripe API is (default Stripe's own); locally the stand-in, local/stripe-server.ts. */
    STRIPE_API_BASE: z.url().optional(),
    /**
     * Signs the `Admission` tokens of queue and draw sales (src/room/admission-token.ts); unset: a
     * key derived from JWT_SECRET (never JWT_SECRET itself, so an admission is never a shopper token).
     */
    ADMISSION_SECRET: secret.optional(),
    /** how long an admitted shopper's hold lasts (the admission token's life) */
    ADMISSION_WINDOW_SECONDS: positiveInt(120),
    /** signs the ALTCHA proof-of-work challenges; unset: a key derived from JWT_SECRET */
    ALTCHA_HMAC_KEY: secret.optional(),
    /** the challenge's difficulty with an empty room; it doubles with every 1,000 tickets, up to 64 times */
    ALTCHA_MAX_NUMBER: positiveInt(20_000),
  })
  .refine(
    (c) =>
      c.REDIS_URL ||
      c.REDIS_CLUSTER_NODES ||
      (c.UPSTASH_REDIS_REST_URL && c.UPSTASH_REDIS_REST_TOKEN) ||
      (c.UPSTASH_REDIS_REST_URLS && c.UPSTASH_REDIS_REST_TOKENS),
    {
      message:
        "REDIS_URL, REDIS_CLUSTER_NODES, UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN, or UPSTASH_REDIS_REST_URLS and UPSTASH_REDIS_REST_TOKENS",
      path: ["REDIS_URL"],
    },
  )
  .refine(
    (c) => {
      if (!c.UPSTASH_REDIS_REST_URLS) return true;
      const tokens = (c.UPSTASH_REDIS_REST_TOKENS ?? "").split(",").map((t) => t.trim());
      return (
        tokens.every((t) => t.length > 0) && c.UPSTASH_REDIS_REST_URLS.split(",").length === tokens.length
      );
    },
    {
      message:
        "UPSTASH_REDIS_REST_TOKENS needs one token per URL of UPSTASH_REDIS_REST_URLS, in the same order, none empty",
      path: ["UPSTASH_REDIS_REST_TOKENS"],
    },
  )
  .refine((c) => !(c.UPSTASH_REDIS_REST_URLS && (c.REDIS_URL || c.REDIS_CLUSTER_NODES)), {
    message:
      "UPSTASH_REDIS_REST_URLS (several Upstash databases) or REDIS_URL / REDIS_CLUSTER_NODES, not both",
    path: ["UPSTASH_REDIS_REST_URLS"],
  })
  .refine((c) => c.REDIS_REPLICA_ACKS === 0 || c.REDIS_URL || c.REDIS_CLUSTER_NODES, {
    message: "REDIS_REPLICA_ACKS needs REDIS_URL or REDIS_CLUSTER_NODES (Upstash keeps its own replicas)",
    path: ["REDIS_REPLICA_ACKS"],
  })
  .refine((c) => !(c.REDIS_URL && c.REDIS_CLUSTER_NODES), {
    message: "REDIS_URL (one server) or REDIS_CLUSTER_NODES (a Cluster), not both",
    path: ["REDIS_CLUSTER_NODES"],
  })
  .refine((c) => c.PAYMENT_PROVIDER !== "stripe" || (c.STRIPE_SECRET_KEY && c.STRIPE_WEBHOOK_SECRET), {
    message: "PAYMENT_PROVIDER=stripe needs STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET",
    path: ["STRIPE_SECRET_KEY"],
  })
  .refine((c) => c.PAYMENT_PROVIDER !== "local" || isLoopbackUrl(c.PUBLIC_URL), {
    message: "PAYMENT_PROVIDER=local needs a loopback PUBLIC_URL",
    path: [
      "PUBLIC_URL (PAYMENT_PROVIDER=local lets shoppers mark their own orders paid: local development only, with PUBLIC_URL on localhost, 127.0.0.0/8 or [::1])",
    ],
  })
  .refine((c) => c.OPERATOR_TOKENS.every((o) => o.name !== "admin" && o.token !== c.ADMIN_TOKEN), {
    message: "OPERATOR_TOKENS names `admin` (ADMIN_TOKEN's operator) or reuses ADMIN_TOKEN",
    path: ["OPERATOR_TOKENS (no operator named admin, no token equal to ADMIN_TOKEN)"],
  })
  .refine((c) => !c.JWT_JWKS_URL || (c.JWT_ISSUER && c.JWT_AUDIENCE), {
    message: "JWT_JWKS_URL needs JWT_ISSUER and JWT_AUDIENCE",
    path: ["JWT_ISSUER and JWT_AUDIENCE (required with JWT_JWKS_URL)"],
  })
  .refine((c) => !c.OPERATOR_JWT_AUDIENCE || (c.JWT_JWKS_URL && c.OPERATOR_JWT_AUDIENCE !== c.JWT_AUDIENCE), {
    message: "OPERATOR_JWT_AUDIENCE needs JWT_JWKS_URL and must differ from JWT_AUDIENCE",
    path: ["OPERATOR_JWT_AUDIENCE (with JWT_JWKS_URL; not the shoppers' JWT_AUDIENCE)"],
  });

/** Typed, validated settings derived from {@link Env}. */
export type Config = z.infer<typeof configSchema>;

const parsed = new WeakMap<object, Config>();

/**
 * Parses the environment once per isolate (the env object is stable for an isolate's life).
 * Throws {@link ConfigError} naming the missing or malformed settings, never their values.
 */
export function readConfig(env: Env): Config {
  const cached = parsed.get(env);
  if (cached) return cached;
  const result = configSchema.safeParse(env);
  if (!result.success) {
    const names = result.error.issues.map((i) => i.path.join(".")).join(", ");
    throw new ConfigError(`Invalid or missing settings: ${names}`);
  }
  parsed.set(env, result.data);
  return result.data;
}

export class ConfigError extends Error {
  override name = "ConfigError";
}

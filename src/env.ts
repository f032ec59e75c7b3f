import { z } from "zod";
import { STREAM_DEFAULTS, STREAMS_PER_IP, STREAMS_PER_USER } from "./stream-defaults";

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
  PRODUCT_TOKEN_SECRET: string;
  UPSTASH_REDIS_REST_URL?: string;
  UPSTASH_REDIS_REST_TOKEN?: string;
  REDIS_URL?: string;
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
  REALTIME_REFRESH_MS?: string;
  REALTIME_PING_MS?: string;
  BUY_RESOLVE_WINDOW_MS?: string;
  WEBHOOK_DELIVERY_RETRIES?: string;
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
const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);

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
    PRODUCT_TOKEN_SECRET: secret,
    /** Redis over Upstash's REST API (every runtime) … */
    UPSTASH_REDIS_REST_URL: z.url().optional(),
    UPSTASH_REDIS_REST_TOKEN: z.string().min(1).optional(),
    /** … or over TCP, `redis://` / `rediss://` (server runtimes only; wins when set): see src/services.ts. */
    REDIS_URL: z
      .string()
      .regex(/^rediss?:\/\//)
      .optional(),
    QSTASH_URL: z.url().optional(),
    QSTASH_TOKEN: z.string().min(1),
    QSTASH_CURRENT_SIGNING_KEY: z.string().min(1),
    QSTASH_NEXT_SIGNING_KEY: z.string().min(1),
    DATABASE_URL: z.string().min(1),
    NEON_HTTP_ENDPOINT: z.url().optional(),
    /** `http` (Neon's SQL over HTTP) or `tcp` (a pool); unset: see `databaseDriver` in src/services.ts. */
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
    REALTIME_REFRESH_MS: positiveInt(250),
    /** a `: ping` after this long without a write; on workerd also how soon a disconnect is noticed */
    REALTIME_PING_MS: positiveInt(STREAM_DEFAULTS.workers.pingMs),
    /** how long a buy attempt may spend learning its outcome before it is voided (reserve-stock.ts) */
    BUY_RESOLVE_WINDOW_MS: positiveInt(8_000),
    /** QStash retries of a webhook delivery job (with its backoff) before it is dead-lettered (src/webhooks/) */
    WEBHOOK_DELIVERY_RETRIES: z.coerce.number().int().min(0).default(5),
    /**
     * Who decides "paid" (src/payments/): `stripe` (Checkout and its signed webhook), `manual` (the shop's
     * back end, POST /api/admin/orders/:orderId/payment), or `local` (the shopper's own /pay: local
     * development only). Unset: `manual`.
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
     * Signs the `Admission` tokens of queue and draw sales (src/admission/admission-token.ts); unset: a
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
  .refine((c) => c.REDIS_URL || (c.UPSTASH_REDIS_REST_URL && c.UPSTASH_REDIS_REST_TOKEN), {
    message: "REDIS_URL or UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN",
    path: ["REDIS_URL"],
  })
  .refine((c) => c.PAYMENT_PROVIDER !== "stripe" || (c.STRIPE_SECRET_KEY && c.STRIPE_WEBHOOK_SECRET), {
    message: "PAYMENT_PROVIDER=stripe needs STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET",
    path: ["STRIPE_SECRET_KEY"],
  })
  .refine((c) => !c.JWT_JWKS_URL || (c.JWT_ISSUER && c.JWT_AUDIENCE), {
    message: "JWT_JWKS_URL needs JWT_ISSUER and JWT_AUDIENCE",
    path: ["JWT_ISSUER and JWT_AUDIENCE (required with JWT_JWKS_URL)"],
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

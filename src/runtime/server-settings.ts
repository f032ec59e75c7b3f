import { z } from "zod";

const schema = z.object({
  /** Port to listen on (Deno Deploy ignores it). */
  PORT: z.coerce.number().int().min(0).max(65_535).default(8787),
  HOSTNAME: z.string().default("0.0.0.0"),
  /**
   * The header a proxy in front of this server sets to the client's address (e.g. `X-Forwarded-For`,
   * `X-Real-IP`, `Fly-Client-IP`); its last entry is taken. Unset: the socket's address.
   */
  TRUST_PROXY_HEADER: z
    .string()
    .optional()
    .transform((v) => v?.trim() || undefined),
  /** When the scheduled handler runs (five-field cron, UTC; "off" for never). wrangler.toml's schedule. */
  CRON_SCHEDULE: z.string().default("* * * * *"),
  /** Where the pages are (relative to the working directory). */
  PUBLIC_DIR: z.string().default("public"),
  /** On SIGTERM/SIGINT, how long requests still open (event streams) may go on before they are cut. */
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).default(5_000),
  /**
   * Then, how long the background work (pending publishes, a running sweep) and closing the connections
   * may take before the process exits anyway: what is left is in the outbox, republished by the sweeper.
   */
  SHUTDOWN_DRAIN_MS: z.coerce.number().int().min(0).default(10_000),
  /** Postgres connections the process holds (DATABASE_DRIVER=tcp): all its statements share them. */
  PG_POOL_MAX: z.coerce.number().int().min(1).max(1_000).default(10),
  /**
   * Traces (OpenTelemetry, OTLP/HTTP): on Bun, where the engine's SDK sends its spans (`/v1/traces` is
   * added) or the traces' own URL; unset, no spans. On Deno, OTEL_DENO=true turns the runtime's own on,
   * which reads the same settings.
   */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url().optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.url().optional(),
  OTEL_SERVICE_NAME: z.string().min(1).default("flash-sale-edge"),
  /** Deno: "true" turns its built-in OpenTelemetry on (the runtime reads it; the engine's spans follow). */
  OTEL_DENO: z.string().optional(),
  /** Head sampling: the share of traces that are kept (a request's own trace; a caller's context is not followed). */
  OTEL_TRACES_SAMPLER_ARG: z.coerce.number().min(0).max(1).default(1),
});

/** Settings only a server runtime has (Deno, Bun); the engine's own are src/env.ts's. */
export type ServerSettings = z.infer<typeof schema>;

export function readServerSettings(env: Record<string, string | undefined>): ServerSettings {
  const result = schema.safeParse(env);
  if (!result.success) {
    throw new Error(
      `Invalid server settings: ${result.error.issues.map((i) => i.path.join(".")).join(", ")}`,
    );
  }
  return result.data;
}

/**
 * The client's address: the trusted header's last entry when one is named, else the socket's (asked for
 * only then: reading it costs on Bun).
 */
export function clientAddress(
  settings: Pick<ServerSettings, "TRUST_PROXY_HEADER">,
  header: (name: string) => string | undefined,
  socketAddress: () => string | undefined,
): string | undefined {
  if (!settings.TRUST_PROXY_HEADER) return socketAddress();
  return header(settings.TRUST_PROXY_HEADER)?.split(",").at(-1)?.trim() || undefined;
}

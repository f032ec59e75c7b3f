import createClient, { type Client } from "openapi-fetch";
import type { paths } from "./schema";

/** A credential: a fixed string, or a function asked before each request (a token the shop's sign-in refreshes). */
export type Credential = string | (() => string | Promise<string>);

/** Where the engine is and how to reach it. */
export type EngineOptions = {
  /** The engine's origin, e.g. `https://sale.example.com` (no `/api`). */
  baseUrl: string;
  /** A fetch of your own (tests, proxies, a Worker's service binding). */
  fetch?: (input: Request) => Promise<Response>;
};

/** The typed openapi-fetch client of every route in the engine's document. */
export type EngineApi = Client<paths>;

/** The engine's error body, with what a caller acts on: the code, the status, and how long to wait. */
export type ApiFailure = {
  status: number;
  code: string;
  message: string;
  /** from `Retry-After` (429, 503, some 409s) */
  retryAfterSeconds?: number;
  /** the whole error object (details such as `remaining`, `held`, `mayStillBuy`) */
  details: Record<string, unknown>;
};

/** An answer as a value: what the route returns on success, or the engine's error. */
export type Result<T> = { ok: true; value: T; status: number } | { ok: false; error: ApiFailure };

/**
 * A typed client with `Authorization: Bearer <credential>` on every request.
 *
 * @example
 * const api = engineApi({ baseUrl: "https://sale.example.com" }, () => auth.getToken());
 * const { data } = await api.GET("/api/sales/{saleId}", { params: { path: { saleId } } });
 */
export function engineApi(options: EngineOptions, credential?: Credential): EngineApi {
  const api = createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ""),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  if (credential !== undefined)
    api.use({
      async onRequest({ request }) {
        const value = typeof credential === "string" ? credential : await credential();
        request.headers.set("Authorization", `Bearer ${value}`);
        return request;
      },
    });
  return api;
}

/** Turns openapi-fetch's `{ data, error, response }` into a {@link Result}. */
export function toResult<T>(answer: { data?: T; error?: unknown; response: Response }): Result<T> {
  const { response } = answer;
  if (response.ok && answer.error === undefined)
    return { ok: true, value: answer.data as T, status: response.status };
  const body = (answer.error ?? {}) as { error?: Record<string, unknown> };
  const details = body.error ?? {};
  const retryAfter = Number(response.headers.get("Retry-After"));
  return {
    ok: false,
    error: {
      status: response.status,
      code: typeof details.code === "string" ? details.code : "UNKNOWN",
      message: typeof details.message === "string" ? details.message : response.statusText,
      ...(retryAfter > 0 ? { retryAfterSeconds: retryAfter } : {}),
      details,
    },
  };
}

/** Waits `ms` milliseconds. */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

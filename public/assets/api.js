import { observeServerTime } from "./clock.js";

/**
 * Calls the worker's API. HTTP failures are values, not exceptions:
 * `{ ok: true, status, data }` or `{ ok: false, status, error: { code, message, ... }, retryAfter }`.
 * Every `serverTime` the API returns corrects the page's clock (see clock.js).
 *
 * @example
 * const r = await callApi("/api/sales");
 * if (r.ok) render(r.data.sales);
 */
export async function callApi(path, { method = "GET", token, body, headers = {} } = {}) {
  const h = { Accept: "application/json", ...headers };
  if (token) h.Authorization = `Bearer ${token}`;
  if (body !== undefined) h["Content-Type"] = "application/json";
  const sentAt = Date.now();
  let res;
  try {
    res = await fetch(path, {
      method,
      headers: h,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: "no-store",
    });
  } catch {
    return { ok: false, status: 0, error: { code: "NETWORK", message: "No connection." }, retryAfter: null };
  }
  const receivedAt = Date.now();
  let data = null;
  try {
    data = await res.json();
  } catch {
    data = null;
  }
  if (data && typeof data.serverTime === "string") observeServerTime(data.serverTime, sentAt, receivedAt);
  if (res.ok) return { ok: true, status: res.status, data };
  const error =
    data?.error && typeof data.error.code === "string"
      ? data.error
      : { code: res.status >= 500 ? "UNAVAILABLE" : "HTTP_ERROR", message: res.statusText };
  const header = Number(res.headers.get("Retry-After"));
  const retryAfter = header > 0 ? header : (error.retryAfterSeconds ?? null);
  return { ok: false, status: res.status, error, retryAfter };
}

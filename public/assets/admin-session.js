import { callApi } from "./api.js";

/**
 * The operator token, kept in sessionStorage (this tab only), and API calls that carry it. A 401
 * anywhere locks the console again through `onLocked`.
 */
const STORAGE_KEY = "flashsale.adminToken";
let onLocked = () => {};

export const adminToken = () => sessionStorage.getItem(STORAGE_KEY);

export function setLockHandler(handler) {
  onLocked = handler;
}

export function lock() {
  sessionStorage.removeItem(STORAGE_KEY);
  onLocked();
}

/** Checks a token against `GET /api/admin/sales`; stores it when accepted. Returns the API result. */
export async function unlock(token) {
  const r = await callApi("/api/admin/sales", { token });
  if (r.ok) sessionStorage.setItem(STORAGE_KEY, token);
  return r;
}

/**
 * `callApi` on `/api/admin${path}` with the stored token. A change that went through (any method but
 * GET answered 2xx) is announced as the window's `admin-change` event, for the audit panel.
 */
export async function adminApi(path, options = {}) {
  const r = await callApi(`/api/admin${path}`, { ...options, token: adminToken() ?? "" });
  if (r.status === 401) lock();
  if (r.ok && (options.method ?? "GET") !== "GET") window.dispatchEvent(new Event("admin-change"));
  return r;
}

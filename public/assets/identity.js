import { callApi } from "./api.js";

/**
 * Who the shopper is: a JWT kept in localStorage. Locally, `POST /api/dev/login` mints one for any user
 * id; in production the shop's own sign-in issues it and hands it over (pasted, stored under the same
 * key by the shop's pages, or passed once as `#token=<JWT>`, which is read and removed from the URL).
 */
const STORAGE_KEY = "flashsale.shopper";

function decodeClaims(token) {
  const part = token.split(".")[1];
  if (!part) return null;
  try {
    const json = atob(
      part
        .replace(/-/g, "+")
        .replace(/_/g, "/")
        .padEnd(Math.ceil(part.length / 4) * 4, "="),
    );
    return JSON.parse(json);
  } catch {
    return null;
  }
}

/** The signed-in shopper `{ userId, token, expiresAt }`, or null (none, or expired). */
export function currentShopper() {
  try {
    const saved = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? "null");
    if (!saved?.token || !saved.userId) return null;
    if (saved.expiresAt && Date.parse(saved.expiresAt) <= Date.now()) return null;
    return saved;
  } catch {
    return null;
  }
}

function save(shopper) {
  localStorage.setItem(STORAGE_KEY, JSON.stringify(shopper));
  return shopper;
}

export function signOut() {
  localStorage.removeItem(STORAGE_KEY);
}

/** The shopper a token names `{ userId, token, expiresAt }`, or `{ error }` when it is not a usable JWT. */
function readToken(raw) {
  const token = raw.trim().replace(/^Bearer\s+/i, "");
  const claims = /^[\w-]+\.[\w-]+\.[\w-]*$/.test(token) ? decodeClaims(token) : null;
  if (!claims) return { error: "That is not a sign-in token (a JWT has three parts separated by dots)." };
  if (typeof claims.sub !== "string" || !claims.sub) return { error: "That token names no shopper (sub)." };
  if (typeof claims.exp !== "number")
    return { error: "That token has no expiry; ask the shop for a new one." };
  const expiresAt = new Date(claims.exp * 1000).toISOString();
  if (Date.parse(expiresAt) <= Date.now()) return { error: "That token has expired." };
  return { userId: claims.sub, token, expiresAt };
}

/** Stores a pasted token. Returns the shopper, or `{ error }` when it is not a usable JWT. */
export function useToken(raw) {
  const shopper = readToken(raw);
  return shopper.error ? shopper : save(shopper);
}

/** Signs in as a shopper read from a handed-over token, once the visitor agreed (see takeTokenFromUrl). */
export function adoptShopper(shopper) {
  return save(shopper);
}

/** True when this deployment offers `POST /api/dev/login` (the local stack): `GET /api/dev/login` says so. */
export async function devSignInAvailable() {
  const r = await callApi("/api/dev/login");
  return r.ok && r.data.enabled === true;
}

/** Signs in as any user id through the dev-only route. Returns the shopper or `{ error }`. */
export async function signInAs(userId) {
  const r = await callApi("/api/dev/login", { method: "POST", body: { userId: userId.trim() } });
  if (r.ok) return save({ userId: r.data.userId, token: r.data.token, expiresAt: r.data.expiresAt });
  if (r.status === 404) return { error: "Signing in by user id is only available on the local test shop." };
  return { error: r.error.message || "Could not sign in." };
}

/**
 * Takes a token handed over as `#token=<JWT>` (the fragment never reaches a server) and cleans the URL.
 * Anyone can craft such a link: when it names another shopper than the one signed in, nothing is
 * stored and `{ switchTo, current }` comes back, so the page asks first (a victim following an
 * attacker's link would otherwise buy and pay as the attacker). The same shopper's token is taken as is.
 */
export function takeTokenFromUrl() {
  const match = /(?:^#|&)token=([\w.-]+)/.exec(location.hash);
  if (!match) return null;
  history.replaceState(null, "", location.pathname + location.search);
  const handed = readToken(match[1]);
  if (handed.error) return handed;
  const current = currentShopper();
  if (current && current.userId !== handed.userId) return { switchTo: handed, current };
  return save(handed);
}

import type { MiddlewareHandler } from "hono";
import type { AppContext } from "../context";
import type { AuditActor } from "../db/audit-log";
import type { Config, Operator } from "../env";
import { ApiError } from "../http/api-error";
import { verifyWithKeySet } from "../identity/verify-with-key-set";
import type { IdentityDeps } from "../services";
import { keySetUnavailable } from "./shopper-auth";

const encoder = new TextEncoder();

/** An operator with the token it signs in with. */
export type OperatorToken = Operator & { token: string };

const digest = async (text: string) =>
  new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text)));

/** Constant-time comparison of two equal-length digests. */
function sameDigest(x: Uint8Array, y: Uint8Array): boolean {
  let diff = x.length ^ y.length;
  for (let i = 0; i < x.length; i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0);
  return diff === 0;
}

/** The operators the settings name: ADMIN_TOKEN as `admin` (role admin), then OPERATOR_TOKENS. */
export function operatorsOf(config: Pick<Config, "ADMIN_TOKEN" | "OPERATOR_TOKENS">): OperatorToken[] {
  return [{ name: "admin", token: config.ADMIN_TOKEN, role: "admin" }, ...config.OPERATOR_TOKENS];
}

/**
 * The operator whose token this is, or null. Every token's digest is compared (no early exit), so the
 * time taken says neither which operator nor how much of a token matched.
 */
async function operatorOf(given: string, operators: OperatorToken[]): Promise<Operator | null> {
  const mine = await digest(given);
  let found: Operator | null = null;
  for (const o of operators) {
    if (sameDigest(mine, await digest(o.token)) && !found) found = { name: o.name, role: o.role };
  }
  return found;
}

const ROLES: readonly Operator["role"][] = ["admin", "read"];

/** An operator's `sub` as the audit log names it: printable, at most 128 characters. */
const OPERATOR_SUB = /^[^\p{Cc}\s][^\p{Cc}]{0,127}$/u;

/**
 * The operator a token of the shop's own sign-in names (OPERATOR_JWT_AUDIENCE set): checked against the
 * shop's key set for that audience, its role in the claim OPERATOR_ROLE_CLAIM. Null when it is not such
 * a token (401 then); 401 too, saying why, for a valid token without an operator's role; 503 while the
 * key set cannot be read.
 */
async function operatorFromSignIn(token: string, identity: IdentityDeps): Promise<Operator | null> {
  const { OPERATOR_JWT_AUDIENCE: audience, OPERATOR_ROLE_CLAIM: claim } = identity.config;
  if (!audience || token.split(".").length !== 3) return null;
  const verdict = await verifyWithKeySet(token, identity, audience);
  if (!verdict.ok && verdict.reason === "unavailable") throw keySetUnavailable();
  if (!verdict.ok || typeof verdict.payload.sub !== "string" || !OPERATOR_SUB.test(verdict.payload.sub))
    return null;
  // a token the shoppers' routes also take (its `aud` names their audience too) is never an operator's
  const audiences = [verdict.payload.aud ?? []].flat();
  if (audiences.includes(identity.config.JWT_AUDIENCE ?? "")) return null;
  const role = verdict.payload[claim];
  if (typeof role !== "string" || !ROLES.includes(role as Operator["role"]))
    throw new ApiError(
      "UNAUTHENTICATED",
      `The token's ${claim} claim names no operator role (admin or read).`,
    );
  return { name: `idp:${verdict.payload.sub}`, role: role as Operator["role"] };
}

/**
 * Guards `/api/admin/*` with `Authorization: Bearer <token>` of a named operator, or a token of the shop's
 * own sign-in with an operator's role (OPERATOR_JWT_AUDIENCE: see {@link operatorFromSignIn}); anything
 * else is 401. Sets the operator (`c.get("operator")`: name and role). A `read` operator may only GET:
 * any other method is 403 FORBIDDEN, before the route reads anything.
 *
 * @example
 * app.use("/api/admin/*", adminAuth({ operators: (c) => operatorsOf(configOf(c)), identity: (c) => deps(c) }))
 */
export function adminAuth(options: {
  operators: (c: Parameters<MiddlewareHandler>[0]) => OperatorToken[];
  identity?: (c: Parameters<MiddlewareHandler>[0]) => IdentityDeps;
}): MiddlewareHandler {
  return async function adminAuthMiddleware(c, next) {
    const given = /^Bearer (.+)$/.exec(c.req.header("Authorization") ?? "")?.[1];
    let operator = given ? await operatorOf(given, options.operators(c)) : null;
    if (!operator && given && options.identity)
      operator = await operatorFromSignIn(given, options.identity(c));
    if (!operator) {
      throw new ApiError(
        "UNAUTHENTICATED",
        "Operator routes need Authorization: Bearer <an operator's token>.",
      );
    }
    if (operator.role !== "admin" && c.req.method !== "GET" && c.req.method !== "HEAD") {
      throw new ApiError("FORBIDDEN", `The operator ${operator.name} may only read (GET).`);
    }
    (c as AppContext).set("operator", operator);
    await next();
  };
}

/** Who is asking, for the audit log: the operator's name (never a token) and the request's id. */
export function auditActor(c: AppContext): AuditActor {
  return { actor: c.get("operator").name, requestId: c.get("requestId") };
}

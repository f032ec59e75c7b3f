import type { MiddlewareHandler } from "hono";
import { MAX_BUY_BODY_BYTES, MAX_QUANTITY } from "../api/buy-schemas";
import { cacheBodyText } from "../api/json-body";
import { refusalFromMemory } from "../buy/refusal-from-memory";
import { readBoundedBody } from "../http/read-body";
import { verifyShopperToken } from "../middleware/shopper-token";
import type { Defer, Services } from "../services";

const BEARER = /^Bearer ([A-Za-z0-9_\-.]+)$/;
const JSON_TYPE = { "Content-Type": "application/json" } as const;

/** The two answers' bodies, the same strings routes/buy.ts's table renders, built once. */
const ANSWERS = {
  unknown_product: {
    status: 404,
    body: JSON.stringify({ error: { code: "UNKNOWN_PRODUCT", message: "No sale is selling this product." } }),
  },
  sold_out: {
    status: 410,
    body: JSON.stringify({ error: { code: "SOLD_OUT", message: "Sold out: every unit has been reserved." } }),
  },
} as const;

/**
 * `POST /api/buy/:productToken`'s refusals at the cost of the no-op route: the answers a crowd mostly
 * gets (a Bloom miss 404, a sale this process knows sold out 410) decided from memory before the route's
 * deps, validators and error rendering are built. It answers only what the route would answer, in the
 * contract's order: the body is read and checked (the route's 400s), the shopper token verified (the
 * route's 401), then the catalog and the sold-out memory (src/buy/refusal-from-memory.ts). Anything else
 * (a bad body or token, an Idempotency-Key, a token the catalog must look up, a sale not known sold out,
 * or known sold out to a buy carrying an `Admission`) goes on to the route, which finds the body already
 * read and the token in the verified tokens.
 *
 * @example
 * app.use("/api/buy/:productToken", buyRefusals({ services: platform.services, defer: platform.defer }));
 */
export function buyRefusals(platform: {
  services: (c: Parameters<MiddlewareHandler>[0]) => Services;
  defer: (c: Parameters<MiddlewareHandler>[0]) => Defer;
}): MiddlewareHandler {
  return async function buyRefusalsMiddleware(c, next) {
    const req = c.req.raw;
    if (req.method !== "POST" || req.headers.has("Idempotency-Key")) return next();
    const text = await readBoundedBody(req, MAX_BUY_BODY_BYTES);
    cacheBodyText(c.req, text.trim() === "" ? "{}" : text);
    if (text !== "" && !plainQuantity(parseOrUndefined(text))) return next();
    const token = BEARER.exec(req.headers.get("Authorization") ?? "")?.[1];
    if (!token) return next();
    const services = platform.services(c);
    const now = services.clock();
    const verdict = verifyShopperToken(
      token,
      services.config,
      services.memory.verifiedTokens,
      Math.floor(now / 1000),
    );
    if (!verdict.ok) return next();
    const { config, memory, redis } = services;
    const refused = refusalFromMemory(
      { config, memory, redis, defer: platform.defer(c) },
      c.req.param("productToken") ?? "",
      now,
    );
    // an admitted buy's units are held: no memory of a sold-out sale speaks for them
    if (!refused || (refused === "sold_out" && req.headers.has("Admission"))) return next();
    const answer = ANSWERS[refused];
    return c.body(answer.body, answer.status, JSON_TYPE);
  };
}

/**
 * A body buyBodySchema accepts as it stands, checked without zod: an object (not an array) whose
 * `quantity` is absent or an integer from 1 to MAX_QUANTITY (other fields are ignored, as the schema
 * strips them). Anything else goes to the route, whose validator answers it.
 */
function plainQuantity(body: unknown): boolean {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return false;
  const q = (body as { quantity?: unknown }).quantity;
  return q === undefined || (Number.isSafeInteger(q) && (q as number) >= 1 && (q as number) <= MAX_QUANTITY);
}

function parseOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

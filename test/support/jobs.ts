import { signDelivery } from "../../local/qstash-delivery";
import type { AppUnderTest } from "./app";
import { checkedFetch } from "./openapi-check";

/**
 * Delivers a job to the worker directly, signed as QStash signs it (or not: `signingKey`, `url` and
 * `now` let a test forge, misdirect or age the signature). The answer is checked against the OpenAPI document.
 */
export async function deliverJob(
  app: Pick<AppUnderTest, "worker" | "stack">,
  path: string,
  body: unknown,
  opts: { signingKey?: string; signedUrl?: string; now?: number; tamper?: (raw: string) => string } = {},
): Promise<{ status: number; text: string }> {
  const raw = JSON.stringify(body);
  const url = `${app.worker.url}${path}`;
  const signature = await signDelivery({
    signingKey: opts.signingKey ?? app.stack.vars.QSTASH_CURRENT_SIGNING_KEY,
    url: opts.signedUrl ?? url,
    body: new TextEncoder().encode(raw),
    ...(opts.now === undefined ? {} : { now: opts.now }),
  });
  const res = await checkedFetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", "Upstash-Signature": signature },
    body: opts.tamper ? opts.tamper(raw) : raw,
  });
  return { status: res.status, text: await res.text() };
}

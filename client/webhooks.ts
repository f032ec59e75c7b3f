import { Webhook, WebhookVerificationError } from "standardwebhooks";

/** A delivery from the engine (contract, Webhooks to the shop): `data` is the Order or the operator Sale, with `version`. */
export type WebhookEvent = {
  type: string;
  timestamp: string;
  data: Record<string, unknown> & { version?: number };
};

/** A delivery checked: its event, or why it was refused (answer 400 and drop it). */
export type WebhookVerdict = { ok: true; id: string; event: WebhookEvent } | { ok: false; reason: string };

/**
 * Verifies a Standard Webhooks delivery (`webhook-id`, `webhook-timestamp`, `webhook-signature`) with the
 * endpoint's secret (`whsec_…`), or any of several while you rotate it; the timestamp must be within five
 * minutes. Pass the body exactly as received (the raw text, not re-serialised JSON). Receivers should
 * drop an event whose `data.version` is older than one already applied (deliveries are at least once).
 *
 * @example
 * const verdict = verifyWebhook(await request.text(), request.headers, env.WEBHOOK_SECRET);
 * if (!verdict.ok) return new Response(verdict.reason, { status: 400 });
 */
export function verifyWebhook(
  body: string,
  headers: Headers | Record<string, string>,
  secrets: string | readonly string[],
): WebhookVerdict {
  const plain = headers instanceof Headers ? Object.fromEntries(headers) : lowerCased(headers);
  let reason = "no secret";
  for (const secret of typeof secrets === "string" ? [secrets] : secrets) {
    try {
      const event = new Webhook(secret).verify(body, plain) as WebhookEvent;
      return { ok: true, id: plain["webhook-id"] ?? "", event };
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
      reason = error.message;
    }
  }
  return { ok: false, reason };
}

function lowerCased(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
}

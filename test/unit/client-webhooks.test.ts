import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { verifyWebhook } from "../../client";

const secret = `whsec_${Buffer.from("a test endpoint secret, 32 bytes!").toString("base64")}`;
const next = `whsec_${Buffer.from("the rotated endpoint secret, also").toString("base64")}`;

/** A delivery as the Standard Webhooks spec signs it (the engine's sender uses the same library). */
function delivery(body: string, signWith: string, at = new Date()) {
  const id = `msg_${Math.random().toString(36).slice(2)}`;
  return {
    "webhook-id": id,
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": new Webhook(signWith).sign(id, at, body),
  };
}

describe("verifyWebhook (client/webhooks.ts)", () => {
  const body = JSON.stringify({
    type: "order.paid",
    timestamp: new Date().toISOString(),
    data: { orderId: "o-1", status: "paid", version: 3 },
  });

  it("accepts a delivery signed with the secret, or with any secret held during a rotation", () => {
    const ok = verifyWebhook(body, new Headers(delivery(body, secret)), secret);
    expect(ok).toMatchObject({ ok: true, event: { type: "order.paid", data: { version: 3 } } });
    expect(verifyWebhook(body, delivery(body, next), [secret, next]).ok).toBe(true);
    const upper = Object.fromEntries(
      Object.entries(delivery(body, secret)).map(([k, v]) => [k.toUpperCase(), v]),
    );
    expect(verifyWebhook(body, upper, secret).ok).toBe(true);
  });

  it("refuses a forged, altered, stale or unsigned delivery", () => {
    expect(verifyWebhook(body, delivery(body, next), secret).ok).toBe(false);
    expect(verifyWebhook(body.replace("o-1", "o-2"), delivery(body, secret), secret).ok).toBe(false);
    const stale = delivery(body, secret, new Date(Date.now() - 10 * 60_000));
    expect(verifyWebhook(body, stale, secret).ok).toBe(false);
    expect(verifyWebhook(body, {}, secret)).toMatchObject({ ok: false });
  });
});

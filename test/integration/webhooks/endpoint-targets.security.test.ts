import { lookup } from "node:dns/promises";
import { hostname } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appForFile } from "../../support/app-per-file";
import { deliverJob } from "../../support/jobs";
import { startWebhookReceiver, type WebhookReceiver } from "../../support/webhook-receiver";

/**
 * Webhook endpoints may not point inside: a target that is not a public address (loopback, RFC 1918,
 * link-local and the cloud metadata address, CGNAT, unspecified, unique-local and link-local IPv6,
 * IPv4-mapped forms, `localhost` names), in any spelling a URL parser accepts, is refused at
 * registration with 400 INVALID_REQUEST; at delivery the target is checked again (a row written
 * before, or on a server runtime a name that resolves inward), so nothing is sent. The local stack
 * allows private targets for its own receivers (WEBHOOK_ALLOW_PRIVATE_TARGETS=true): this file does not.
 */
const app = appForFile({ vars: { WEBHOOK_ALLOW_PRIVATE_TARGETS: "false" } });

let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await receiver?.close();
});

const INWARD = [
  "http://127.0.0.1/hook",
  "http://127.1/hook",
  "http://2130706433/hook",
  "http://0x7f.1/hook",
  "http://0177.0.0.1/hook",
  "http://127.0.0.1.:8080/hook",
  "http://[::1]/hook",
  "http://[::ffff:127.0.0.1]/hook",
  "http://[0:0:0:0:0:ffff:7f00:1]/hook",
  "http://localhost:8790/webhooks",
  "http://LOCALHOST./hook",
  "https://shop.localhost/hook",
  "http://0.0.0.0/hook",
  "http://0/hook",
  "http://10.1.2.3/hook",
  "http://172.16.0.1/hook",
  "http://172.31.255.254/hook",
  "http://192.168.0.10/hook",
  "http://169.254.169.254/latest/meta-data/",
  "http://[::ffff:a9fe:a9fe]/latest/meta-data/",
  "http://100.64.0.1/hook",
  "http://[::]/hook",
  "http://[fc00::1]/hook",
  "http://[fd12:3456:789a::1]/hook",
  "http://[fe80::1]/hook",
  "http://[febf::1]/hook",
];

const PUBLIC = [
  "https://shop.example/hooks/flash",
  "http://93.184.216.34/hook",
  "https://[2606:4700:4700::1111]/hook",
  "http://172.32.0.1/hook",
];

type Created = { endpointId: string; url: string; secret: string };
const register = (url: string) =>
  app.api.admin<Created>("POST", "/webhooks", { url, events: ["order.paid"] });
const endpointCount = async () =>
  (await app.api.admin<{ endpoints: unknown[] }>("GET", "/webhooks")).body.endpoints.length;

function job(endpointId: string) {
  const msgId = `msg_target_${endpointId}`;
  return {
    endpointId,
    messages: [{ msgId, payload: { type: "order.paid", timestamp: new Date().toISOString(), data: {} } }],
  };
}

describe("registering a webhook endpoint", () => {
  it(`refuses ${INWARD.length} inward targets in any spelling with 400 INVALID_REQUEST, storing nothing`, async () => {
    const before = await endpointCount();
    const refused = [];
    for (const url of INWARD) {
      const res = await register(url);
      refused.push([url, res.status, (res.body as { error?: { code?: string } }).error?.code]);
      if (res.status === 400) {
        const error = (res.body as unknown as { error: { message: string; fields?: Record<string, string> } })
          .error;
        expect(error.message).toMatch(/public/);
        expect(error.fields?.url).toBe(error.message);
      }
    }
    expect(refused).toEqual(INWARD.map((url) => [url, 400, "INVALID_REQUEST"]));
    expect(await endpointCount()).toBe(before);
  });

  it("takes public targets", async () => {
    for (const url of PUBLIC) expect([url, (await register(url)).status]).toEqual([url, 201]);
  });
});

describe("delivering to an endpoint", () => {
  it("sends nothing to an inward target registered before (the job fails, as for an endpoint that is down)", async () => {
    const endpointId = "ep_0123456789abcdef01234567";
    await app.db.query(
      "insert into webhook_endpoints (id, url, events, secret) values ($1, $2, $3::jsonb, $4)",
      [endpointId, receiver.url, JSON.stringify(["order.paid"]), "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"],
    );
    const res = await deliverJob(app, "/api/jobs/webhook-delivery", job(endpointId));
    expect([res.status, JSON.parse(res.text).error.code]).toEqual([502, "DELIVERY_FAILED"]);
    expect(receiver.deliveries).toHaveLength(0);
  });

  it("on a server runtime, sends nothing to a name that resolves to an inward address", async (ctx) => {
    const name = hostname().toLowerCase();
    const addresses = await lookup(name, { all: true }).catch(() => []);
    // workerd's fetch runs where the shop's private network is not (Cloudflare's edge): nothing to check;
    // elsewhere the machine's own name must lead to the receiver (on 127.0.0.1) for this to mean anything
    const reachesReceiver = addresses.some((a) => a.address === "127.0.0.1");
    if (app.runtime === "workers" || !reachesReceiver || name.endsWith("localhost")) ctx.skip();
    const url = receiver.url.replace("127.0.0.1", name);
    const created = await register(url);
    expect(created.status).toBe(201);
    const res = await deliverJob(app, "/api/jobs/webhook-delivery", job(created.body.endpointId));
    expect([res.status, JSON.parse(res.text).error.code]).toEqual([502, "DELIVERY_FAILED"]);
    expect(receiver.deliveries).toHaveLength(0);
  });
});

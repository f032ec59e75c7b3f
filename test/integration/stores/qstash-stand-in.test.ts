/**
 * The local QStash server driven by the real `@upstash/qstash` Client, delivering to a small HTTP
 * receiver that checks every delivery with the real `Receiver`: signatures, delay and not-before,
 * retries with backoff and Retry-After, failure callback and DLQ, deduplication, cancel, batches, what it
 * refuses, and the fault-injection controls.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { Client, QstashError, Receiver } from "@upstash/qstash";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { closeServer, listen, readBody } from "../../../local/http-util";
import { signDelivery } from "../../../local/qstash-delivery";
import { type QStashServer, startQStashServer } from "../../../local/qstash-server";

const token = "test-qstash-token";
const currentSigningKey = "sig_test_current";
const nextSigningKey = "sig_test_next";
const verifier = new Receiver({ currentSigningKey, nextSigningKey });

type Delivery = {
  path: string;
  headers: IncomingMessage["headers"];
  body: string;
  at: number;
  verified: boolean;
};
type Answer = { status: number; headers?: Record<string, string>; body?: string };

let qstash: QStashServer;
let client: Client;
let receiver: Server;
let base: string;
let deliveries: Delivery[] = [];
/** Per path: how to answer the n-th delivery (0-based). Default 200. */
let answers: Record<string, (n: number) => Answer> = {};

async function receive(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = (await readBody(req)).toString("utf8");
  const path = req.url ?? "/";
  const verified = await verifier
    .verify({ signature: String(req.headers["upstash-signature"]), body, url: `${base}${path}` })
    .catch(() => false);
  const n = deliveries.filter((d) => d.path === path).length;
  deliveries.push({ path, headers: req.headers, body, at: Date.now(), verified });
  const answer = answers[path]?.(n) ?? { status: 200 };
  res.writeHead(answer.status, answer.headers).end(answer.body ?? "");
}

const at = (path: string) => deliveries.filter((d) => d.path === path);

beforeAll(async () => {
  qstash = await startQStashServer({ port: 0, token, currentSigningKey, nextSigningKey, retryBaseMs: 50 });
  client = new Client({ token, baseUrl: qstash.url, enableTelemetry: false });
  receiver = createServer((req, res) => void receive(req, res));
  base = `http://127.0.0.1:${await listen(receiver, 0)}`;
});

afterAll(async () => {
  await qstash?.close();
  if (receiver) await closeServer(receiver);
});

beforeEach(() => {
  deliveries = [];
  answers = {};
  qstash.setFaults({ duplicateRate: 0, delayJitterMs: 0, pauseDelivery: false });
});

describe("local QStash server", () => {
  it("delivers a signed message that the real Receiver verifies", async () => {
    const { messageId } = await client.publishJSON({
      url: `${base}/jobs/order?x=1`,
      body: { orderId: "o-1" },
      headers: { "X-Trace": "t-1" },
    });
    await qstash.idle(5_000);
    const [delivery] = at("/jobs/order?x=1");
    expect(delivery).toMatchObject({ body: '{"orderId":"o-1"}', verified: true });
    expect(delivery?.headers).toMatchObject({
      "upstash-message-id": messageId,
      "upstash-retried": "0",
      "content-type": "application/json",
      "x-trace": "t-1",
    });
    const rotated = new Receiver({ currentSigningKey: "sig_other", nextSigningKey: currentSigningKey });
    const signature = String(delivery?.headers["upstash-signature"]);
    const url = `${base}/jobs/order?x=1`;
    await expect(rotated.verify({ signature, body: delivery?.body ?? "", url })).resolves.toBe(true);
  });

  it("rejects forged or tampered signatures", async () => {
    const url = `${base}/jobs/forged`;
    const body = '{"orderId":"o-2"}';
    const forged = await signDelivery({ signingKey: "sig_attacker", url, body: Buffer.from(body) });
    await expect(verifier.verify({ signature: forged, body, url })).rejects.toThrow();
    const genuine = await signDelivery({ signingKey: currentSigningKey, url, body: Buffer.from(body) });
    await expect(verifier.verify({ signature: genuine, body, url })).resolves.toBe(true);
    await expect(verifier.verify({ signature: genuine, body: '{"orderId":"o-3"}', url })).rejects.toThrow(
      /body/,
    );
    await expect(verifier.verify({ signature: genuine, body, url: `${base}/other` })).rejects.toThrow(
      /subject/,
    );
  });

  it("holds delayed and not-before messages until they are due", async () => {
    const published = Date.now();
    await client.publishJSON({ url: `${base}/delay`, body: {}, delay: 1 });
    await client.publishJSON({
      url: `${base}/not-before`,
      body: {},
      notBefore: Math.ceil(published / 1000) + 1,
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(deliveries).toHaveLength(0);
    await qstash.idle(5_000);
    expect(at("/delay")[0]?.at ?? 0).toBeGreaterThanOrEqual(published + 950);
    expect(at("/not-before")[0]?.at ?? 0).toBeGreaterThanOrEqual(Math.ceil(published / 1000) * 1000 + 950);
  });

  it("retries after failures with exponential backoff, then delivers", async () => {
    answers["/flaky"] = (n) => ({ status: n < 2 ? 500 : 200 });
    await client.publishJSON({ url: `${base}/flaky`, body: { n: 1 } });
    await qstash.idle(5_000);
    const attempts = at("/flaky");
    expect(attempts.map((d) => d.headers["upstash-retried"])).toEqual(["0", "1", "2"]);
    expect(attempts.every((d) => d.verified)).toBe(true);
    const [a, b, c] = attempts.map((d) => d.at);
    expect((b ?? 0) - (a ?? 0)).toBeGreaterThanOrEqual(45);
    expect((c ?? 0) - (b ?? 0)).toBeGreaterThanOrEqual(95);
  });

  it("honours Retry-After", async () => {
    answers["/busy"] = (n) => (n === 0 ? { status: 429, headers: { "Retry-After": "1" } } : { status: 200 });
    await client.publishJSON({ url: `${base}/busy`, body: {} });
    await qstash.idle(5_000);
    const [first, second] = at("/busy");
    expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(950);
  });

  it("calls the failure callback and keeps the message in the DLQ after the last retry", async () => {
    answers["/broken"] = () => ({ status: 500, body: "boom" });
    const { messageId } = await client.publishJSON({
      url: `${base}/broken`,
      body: { orderId: "o-9" },
      retries: 2,
      failureCallback: `${base}/failed`,
    });
    await qstash.idle(5_000);
    expect(at("/broken")).toHaveLength(3);
    const [callback] = at("/failed");
    expect(callback?.verified).toBe(true);
    const payload = JSON.parse(callback?.body ?? "{}");
    expect(payload).toMatchObject({
      status: 500,
      sourceMessageId: messageId,
      url: `${base}/broken`,
      retried: 2,
    });
    expect(Buffer.from(payload.body, "base64").toString()).toBe("boom");
    expect(Buffer.from(payload.sourceBody, "base64").toString()).toBe('{"orderId":"o-9"}');
    const entry = qstash.dlq().find((m) => m.messageId === messageId);
    expect(entry).toMatchObject({ responseStatus: 500, responseBody: "boom", body: '{"orderId":"o-9"}' });
  });

  it("does not enqueue a deduplicated message twice", async () => {
    const first = await client.publishJSON({
      url: `${base}/dedup`,
      body: { a: 1 },
      deduplicationId: "order-7",
    });
    const again = await client.publishJSON({
      url: `${base}/dedup`,
      body: { a: 2 },
      deduplicationId: "order-7",
    });
    expect(again).toEqual({ messageId: first.messageId, url: `${base}/dedup`, deduplicated: true });
    const byContent = { url: `${base}/dedup`, body: { c: 1 }, contentBasedDeduplication: true };
    await client.publishJSON(byContent);
    expect((await client.publishJSON(byContent)).deduplicated).toBe(true);
    await qstash.idle(5_000);
    expect(at("/dedup").map((d) => d.body)).toEqual(['{"a":1}', '{"c":1}']);
  });

  it("cancels a message before it is delivered; one due later does not hold idle() up", async () => {
    const { messageId } = await client.publishJSON({ url: `${base}/cancelled`, body: {}, delay: 30 });
    expect(qstash.scheduler.messageIds()).toEqual([messageId]);
    await qstash.idle(1_000); // a message due after the wait does not hold idle() up
    expect(qstash.scheduler.cancel(messageId)).toBe(true);
    expect(qstash.pending()).toBe(0);
    expect(qstash.scheduler.cancel(messageId)).toBe(false);
    expect(at("/cancelled")).toHaveLength(0);
  });

  it("publishes batches", async () => {
    const replies = await client.batchJSON([
      { url: `${base}/batch/1`, body: { i: 1 } },
      { url: `${base}/batch/2`, body: { i: 2 }, headers: { "X-Batch": "yes" } },
    ]);
    expect(replies).toHaveLength(2);
    await qstash.idle(5_000);
    expect(at("/batch/1")[0]).toMatchObject({ body: '{"i":1}', verified: true });
    expect(at("/batch/2")[0]?.headers["x-batch"]).toBe("yes");
  });

  it("refuses a wrong token and a non-loopback destination", async () => {
    const intruder = new Client({
      token: "wrong",
      baseUrl: qstash.url,
      enableTelemetry: false,
      retry: false,
    });
    await expect(intruder.publishJSON({ url: `${base}/x`, body: {} })).rejects.toMatchObject({ status: 401 });
    await expect(client.publishJSON({ url: "https://example.com/x", body: {} })).rejects.toMatchObject({
      status: 400,
    });
  });

  it("checks a whole batch before publishing any of it", async () => {
    const published = qstash.delivered.published;
    const failed = await client
      .batchJSON([
        { url: `${base}/batch-valid`, body: { i: 1 } },
        { url: "https://example.com/x", body: { i: 2 } },
      ])
      .catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(QstashError);
    await qstash.idle(5_000);
    expect(at("/batch-valid"), "the valid entry was not published").toHaveLength(0);
    expect(qstash.delivered.published).toBe(published);
    expect(String((failed as Error).message)).toMatch(/batch entry 1/);
  });

  it("refuses queues and flow control by name instead of ignoring them", async () => {
    const queued = client.queue({ queueName: "orders" }).enqueueJSON({ url: `${base}/queued`, body: {} });
    await expect(queued).rejects.toThrow(/queues/);
    const flow = client.publishJSON({
      url: `${base}/flow`,
      body: {},
      flowControl: { key: "k", parallelism: 1 },
    });
    await expect(flow).rejects.toThrow(/flow control/);
    await qstash.idle(5_000);
    expect([...at("/queued"), ...at("/flow")]).toHaveLength(0);
  });

  it("answers 501 for the QStash endpoints the engine never calls", async () => {
    const refusals = [
      client.messages.get("msg_x"),
      client.messages.delete("msg_x"),
      client.dlq.listMessages(),
      client.dlq.delete("dlq_x"),
      client.schedules.list(),
    ];
    for (const refusal of refusals) {
      const failed = await refusal.catch((e: unknown) => e);
      expect(failed).toBeInstanceOf(QstashError);
      expect(failed).toMatchObject({ status: 501, message: expect.stringMatching(/not implemented/) });
    }
    const control = await fetch(`${qstash.url}/__local/faults`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}` },
      body: "{}",
    });
    expect(control.status).toBe(404);
  });

  it("injects duplicates and pauses delivery on request", async () => {
    qstash.setFaults({ duplicateRate: 1 });
    const { messageId } = await client.publishJSON({ url: `${base}/twice`, body: {} });
    await qstash.idle(5_000);
    expect(at("/twice").map((d) => d.headers["upstash-message-id"])).toEqual([messageId, messageId]);
    qstash.setFaults({ duplicateRate: 0 });
    const paused = await fetch(`${qstash.url}/__local/pause`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}` },
    });
    expect(await paused.json()).toMatchObject({ paused: true });
    await client.publishJSON({ url: `${base}/held`, body: {} });
    await new Promise((r) => setTimeout(r, 200));
    expect(qstash.pending()).toBe(1);
    expect(at("/held")).toHaveLength(0);
    qstash.resume();
    await qstash.idle(5_000);
    expect(at("/held")).toHaveLength(1);
  });
});

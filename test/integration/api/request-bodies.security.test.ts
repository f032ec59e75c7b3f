import { describe, expect, it } from "vitest";
import { newOrderId } from "../../../src/ids";
import { appForFile } from "../../support/app-per-file";
import { deliverJob } from "../../support/jobs";
import { filler, stall, streamRequest } from "../../support/raw-request";
import { ADMIN_TOKEN, shopperToken } from "../../support/shopper";
import { storesUnchanged } from "../../support/stores-unchanged";

/**
 * Request bodies past each route's cap: refused by their declared length before they are read, or cut
 * off while read, on every route that reads a body; nothing written.
 */
const app = appForFile({ vars: { RATE_LIMIT_USER_PER_WINDOW: "1000" } });

const code = (body: Record<string, unknown>) => (body.error as { code?: string } | undefined)?.code;
const unchanged = <T>(work: () => Promise<T>) => storesUnchanged(app, work);

describe("request bodies", () => {
  const JOB_PATHS = [
    "/api/jobs/order-write",
    "/api/jobs/payment-timeout",
    "/api/jobs/void-reservation",
    "/api/jobs/failed",
  ];
  const FIFTY_MB = 50 * 1024 * 1024;
  const CHUNK = 16 * 1024;
  const forged = { "Content-Type": "application/json", "Upstash-Signature": "any-value-at-all" };
  const errorCode = (text: string) => {
    try {
      return code(JSON.parse(text) as Record<string, unknown>);
    } catch {
      return `not JSON: ${text.slice(0, 80)}`;
    }
  };

  it("a 50 MB job body with any Upstash-Signature is refused by its Content-Length before it is read, writing nothing", async () => {
    await unchanged(async () => {
      for (const path of JOB_PATHS) {
        // one chunk, then the rest only if no answer came within 5 s: a server that reads before it
        // checks takes all 50 MB first
        const answer = await streamRequest(`${app.worker.url}${path}`, {
          headers: { ...forged, "Content-Length": String(FIFTY_MB) },
          body: filler(CHUNK, FIFTY_MB / CHUNK),
          pause: { afterBytes: CHUNK, forMs: 5_000 },
        });
        expect([path, answer.status, errorCode(answer.text)]).toEqual([path, 413, "PAYLOAD_TOO_LARGE"]);
        expect(answer.sentBytes, path).toBe(CHUNK);
      }
    });
  });

  it("a Content-Length that lies (50 MB declared, 1 KiB sent, then nothing) is answered without waiting for the rest", async () => {
    await unchanged(async () => {
      for (const path of JOB_PATHS) {
        const answer = await streamRequest(`${app.worker.url}${path}`, {
          headers: { ...forged, "Content-Length": String(FIFTY_MB) },
          body: stall(new Uint8Array(1024).fill(32)),
        });
        expect([path, answer.status, errorCode(answer.text)]).toEqual([path, 413, "PAYLOAD_TOO_LARGE"]);
      }
    });
  });

  it("a chunked body (no Content-Length) that never ends is cut off once past the cap, on every route that reads a body", async () => {
    const sale = await app.api.createSale({ stock: 3 });
    const shopper = `Bearer ${await shopperToken("streamer")}`;
    const admin = `Bearer ${ADMIN_TOKEN}`;
    type Route = [path: string, headers: Record<string, string>, cap: number, status: number, code: string];
    const routes: Route[] = [
      ["/api/jobs/order-write", forged, 64 * 1024, 413, "PAYLOAD_TOO_LARGE"],
      ["/api/jobs/payment-timeout", forged, 64 * 1024, 413, "PAYLOAD_TOO_LARGE"],
      ["/api/jobs/void-reservation", forged, 64 * 1024, 413, "PAYLOAD_TOO_LARGE"],
      ["/api/jobs/failed", forged, 256 * 1024, 413, "PAYLOAD_TOO_LARGE"],
      [`/api/buy/${sale.productToken}`, { Authorization: shopper }, 1024, 400, "INVALID_REQUEST"],
      [
        `/api/orders/${newOrderId(sale.saleId)}/pay`,
        { Authorization: shopper },
        1024,
        400,
        "INVALID_REQUEST",
      ],
      ["/api/admin/sales", { Authorization: admin }, 16 * 1024, 400, "INVALID_REQUEST"],
      [`/api/admin/sales/${sale.saleId}/stock`, { Authorization: admin }, 16 * 1024, 400, "INVALID_REQUEST"],
      ["/api/dev/login", {}, 1024, 400, "INVALID_REQUEST"],
    ];
    await unchanged(async () => {
      for (const [path, headers, cap, status, errCode] of routes) {
        // just past the cap, and then silence: the body never ends, so only a server that counts
        // while it reads can answer
        const chunk = 1024;
        const answer = await streamRequest(`${app.worker.url}${path}`, {
          headers: { "Content-Type": "application/json", ...headers },
          body: filler(chunk, Number.POSITIVE_INFINITY),
          chunked: true,
          pause: { afterBytes: cap + chunk, forMs: 60_000 },
        });
        expect([path, answer.status, errorCode(answer.text)]).toEqual([path, status, errCode]);
        expect(answer.sentBytes, path).toBe(cap + chunk);
      }
    });
  });

  it("a signed failure callback carrying the largest job body a job route takes (50 orders) is still taken", async () => {
    const sale = await app.api.createSale({ stock: 1 });
    const orders = Array.from({ length: 50 }, () => ({
      orderId: newOrderId(sale.saleId),
      saleId: sale.saleId,
      userId: "\u0001".repeat(128),
      quantity: 1,
      createdAt: Date.now(),
      expiresAt: Date.now() + 60_000,
      epoch: 1,
    }));
    const failure = {
      sourceMessageId: `msg_big_${sale.saleId}`,
      url: `${app.worker.url}/api/jobs/order-write`,
      status: 500,
      body: Buffer.from("x".repeat(4096)).toString("base64"),
      sourceBody: Buffer.from(JSON.stringify({ orders })).toString("base64"),
    };
    expect(JSON.stringify(failure).length).toBeGreaterThan(64 * 1024);
    const res = await deliverJob(app, "/api/jobs/failed", failure);
    expect(res.status, res.text).toBe(200);
  });
});

import { createHash } from "node:crypto";
import { solveChallenge } from "altcha-lib/v1";
import { describe, expect, it } from "vitest";
import { signAdmission } from "../../src/admission/admission-token";
import { appForFile } from "../support/app-per-file";
import { commandCounts, commandDelta, snapshot } from "../support/redis-inspect";
import { JWT_SECRET, shopperToken } from "../support/shopper";
import { openEvents } from "../support/sse";

const ADMISSION_SECRET = "admission-secret-for-tests-only";
const app = appForFile({
  vars: { RATE_LIMIT_USER_PER_WINDOW: "1000", ADMISSION_SECRET, SHOPPER_LIMIT_USER_PER_WINDOW: "1000" },
});

type Ticket = {
  ticketId: string;
  saleId: string;
  position: number;
  frontier: number;
  verdict: string;
  estimatedWaitSeconds: number;
  admission?: { token: string; expiresAt: string };
};

const errorCode = (body: Record<string, unknown>) => (body.error as { code?: string } | undefined)?.code;
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

async function join(saleId: string, userId: string, body: unknown = {}) {
  return app.api.call<Ticket & Record<string, unknown>>("POST", `/api/sales/${saleId}/queue`, {
    token: await shopperToken(userId),
    body,
  });
}

async function me(saleId: string, userId: string) {
  return app.api.call<Ticket & Record<string, unknown>>("GET", `/api/sales/${saleId}/queue/me`, {
    token: await shopperToken(userId),
  });
}

async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (ok(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe("admission modes", () => {
  it("an open sale has no queue; a queue sale says its mode and hands out one ticket per shopper", async () => {
    const open = await app.api.createSale();
    expect(open.admission).toBe("open");
    const refused = await join(open.saleId, "o1");
    expect([refused.status, errorCode(refused.body)]).toEqual([409, "NO_QUEUE"]);
    expect((await app.api.buy(open.productToken, "o1")).status).toBe(202);

    const sale = await app.api.createSale({ admission: "queue", stock: 5 });
    expect(sale.admission).toBe("queue");
    const shown = await app.api.call("GET", `/api/sales/${sale.saleId}`);
    expect(shown.body.admission).toBe("queue");
    const none = await me(sale.saleId, "q1");
    expect([none.status, errorCode(none.body)]).toEqual([404, "NO_TICKET"]);
    const first = await join(sale.saleId, "q1");
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ saleId: sale.saleId, position: 1, verdict: "admitted" });
    const again = await join(sale.saleId, "q1");
    expect(again.body.ticketId).toBe(first.body.ticketId);
    expect((await me(sale.saleId, "q1")).body.ticketId).toBe(first.body.ticketId);
  });

  it("a buy of a queue sale needs this shopper's live admission for this sale; refusals touch no stock", async () => {
    const sale = await app.api.createSale({ admission: "queue", stock: 5 });
    const other = await app.api.createSale({ admission: "queue", stock: 5 });
    const mine = (await join(sale.saleId, "a1")).body.admission?.token as string;
    const theirs = (await join(sale.saleId, "a2")).body.admission?.token as string;
    const elsewhere = (await join(other.saleId, "a1")).body.admission?.token as string;
    expect(mine && theirs && elsewhere).toBeTruthy();
    const config = { ADMISSION_SECRET, JWT_SECRET };
    const admission = { saleId: sale.saleId, userId: "a1", ticketId: "t", units: 2 };
    const lapsed = await signAdmission(config, { ...admission, expiresAt: Date.now() - 1000 });
    const forged = await signAdmission(
      { ...config, ADMISSION_SECRET: "another-secret-entirely" },
      {
        ...admission,
        expiresAt: Date.now() + 60_000,
      },
    );
    const before = await snapshot(app.redis);
    const counts = await commandCounts(app.redis);
    for (const header of [undefined, "nonsense", theirs, elsewhere, lapsed, forged]) {
      const res = await app.api.buy(sale.productToken, "a1", 1, header ? { Admission: header } : {});
      expect([res.status, errorCode(res.body)], String(header)).toEqual([403, "NOT_ADMITTED"]);
    }
    expect(commandDelta(counts, await commandCounts(app.redis)).evalsha ?? 0).toBe(0);
    expect(await snapshot(app.redis)).toEqual(before);
    const ok = await app.api.buy(sale.productToken, "a1", 2, { Admission: mine });
    expect(ok.status).toBe(202);
  });
});

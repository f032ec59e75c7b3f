import { describe, expect, it } from "vitest";
import { appForFile } from "../../support/app-per-file";
import { shopperToken } from "../../support/shopper";

/*
 * A pause and a rebuild's quiet period are time out of every running admission: an admitted shopper
 * cannot buy meanwhile, so the admission's clock stops, the shopper keeps their place and their units,
 * and the next ticket is not handed them. Admissions of 4 s (4 s of grace after), halts of 9 s and more
 * (a rebuild's quiet period: 12 s). Each test has its own sale and shoppers: they wait side by side.
 */

const app = appForFile({
  vars: {
    RATE_LIMIT_USER_PER_WINDOW: "1000",
    SHOPPER_LIMIT_USER_PER_WINDOW: "1000",
    ADMISSION_SECRET: "admission-secret-for-tests-only",
    ADMISSION_WINDOW_SECONDS: "4",
    BUY_RESOLVE_WINDOW_MS: "2000",
    RECOVERY_QUIET_SECONDS: "12",
  },
});

type Ticket = { ticketId: string; verdict: string; admission?: { token: string; expiresAt: string } };

const HALT_MS = 9_000;
const errorCode = (body: Record<string, unknown>) => (body.error as { code?: string } | undefined)?.code;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function join(saleId: string, userId: string) {
  const res = await app.api.call("POST", `/api/sales/${saleId}/queue`, { token: await shopperToken(userId) });
  return res.body as Ticket;
}

async function me(saleId: string, userId: string) {
  const res = await app.api.call("GET", `/api/sales/${saleId}/queue/me`, {
    token: await shopperToken(userId),
  });
  return res.body as Ticket;
}

/** The operator's view: a tick of the room (lapses, admissions, the cutoff), as the feed and the sweep run it. */
const tick = (saleId: string) => app.api.admin("GET", `/sales/${saleId}/queue`);

/**
 * Halts the sale `HALT_MS` (longer than an admission and its grace) while the room is ticked, then checks
 * the admitted shopper still holds their place, buys with the token they were given, and that the
 * waiter behind was not let in with their units.
 */
async function haltedAdmissionSurvives(
  sale: { saleId: string; productToken: string },
  front: { userId: string; token: string },
  next: string,
  halt: { begin: () => Promise<void>; end: () => Promise<void>; refusal: [number, string] },
) {
  const haltEnds = Date.now() + HALT_MS;
  await halt.begin();
  while (Date.now() < haltEnds) {
    expect((await tick(sale.saleId)).status).toBe(200);
    expect((await me(sale.saleId, front.userId)).verdict).toBe("admitted");
    await sleep(1_000);
  }
  // the admission's own end has passed: still running, the sale just cannot be bought
  const during = await app.api.buy(sale.productToken, front.userId, 1, { Admission: front.token });
  expect([during.status, errorCode(during.body)]).toEqual(halt.refusal);
  await halt.end();
  await tick(sale.saleId);
  expect((await me(sale.saleId, next)).verdict).not.toBe("admitted");
  const ticket = await me(sale.saleId, front.userId);
  expect(ticket.verdict).toBe("admitted");
  expect(Date.parse(ticket.admission?.expiresAt ?? "")).toBeGreaterThan(Date.now());
  const bought = await app.api.buy(sale.productToken, front.userId, 1, { Admission: front.token });
  expect([bought.status, errorCode(bought.body)]).toEqual([202, undefined]);
  expect((await me(sale.saleId, next)).verdict).not.toBe("admitted");
}

const pauseFor = (saleId: string) => ({
  begin: async () => expect((await app.api.admin("POST", `/sales/${saleId}/pause`)).status).toBe(200),
  end: async () => expect((await app.api.admin("POST", `/sales/${saleId}/resume`)).status).toBe(200),
  refusal: [409, "SALE_PAUSED"] as [number, string],
});

describe.concurrent("an operator's pause longer than an admission", () => {
  it("a queue's front still buys after the resume, and its unit is not handed on", async () => {
    const sale = await app.api.createSale({ admission: "queue", stock: 1, perUserLimit: 1 });
    const front = await join(sale.saleId, "front");
    expect(front.verdict).toBe("admitted");
    expect((await join(sale.saleId, "next")).verdict).not.toBe("admitted");
    const token = front.admission?.token ?? "";
    await haltedAdmissionSurvives(sale, { userId: "front", token }, "next", pauseFor(sale.saleId));
  }, 60_000);

  it("a draw's winner still buys after the resume; its backup does not take the unit", async () => {
    const startsAt = Date.now() + 4_000;
    const sale = await app.api.createSale({
      admission: "draw",
      stock: 1,
      perUserLimit: 1,
      startsAt: new Date(startsAt).toISOString(),
    });
    await join(sale.saleId, "d0");
    await join(sale.saleId, "d1");
    await sleep(Math.max(0, startsAt - Date.now()) + 300);
    const tickets = { d0: await me(sale.saleId, "d0"), d1: await me(sale.saleId, "d1") };
    const winner = tickets.d0.verdict === "admitted" ? "d0" : "d1";
    const backup = winner === "d0" ? "d1" : "d0";
    expect([tickets[winner].verdict, tickets[backup].verdict]).toEqual(["admitted", "may_get"]);
    const token = tickets[winner].admission?.token ?? "";
    await haltedAdmissionSurvives(sale, { userId: winner, token }, backup, pauseFor(sale.saleId));
  }, 60_000);

  it("pauses again and again, and a resume without a pause, never cut an admission short", async () => {
    const sale = await app.api.createSale({ admission: "queue", stock: 1, perUserLimit: 1 });
    const front = await join(sale.saleId, "twice");
    const token = front.admission?.token ?? "";
    const end = () => Date.parse((front.admission?.expiresAt as string) ?? "");
    const pause = pauseFor(sale.saleId);
    // a resume of a sale that is not paused changes no admission
    await pause.end();
    expect((await me(sale.saleId, "twice")).admission?.expiresAt).toBe(front.admission?.expiresAt);
    let paused = 0;
    for (let i = 0; i < 2; i++) {
      const from = Date.now();
      await pause.begin();
      await pause.begin();
      await sleep(3_000);
      await tick(sale.saleId);
      await pause.end();
      paused += Date.now() - from;
    }
    // moved by both pauses, each counted from its first pause to its resume
    const moved = Date.parse((await me(sale.saleId, "twice")).admission?.expiresAt ?? "");
    expect(moved - end()).toBeGreaterThanOrEqual(6_000);
    expect(moved - end()).toBeLessThanOrEqual(paused + 50);
    const bought = await app.api.buy(sale.productToken, "twice", 1, { Admission: token });
    expect(bought.status).toBe(202);
  }, 60_000);
});

describe.concurrent("a rebuild's quiet period longer than an admission", () => {
  it("the queue's front still buys after it, and its unit is not handed on", async () => {
    const sale = await app.api.createSale({ admission: "queue", stock: 1, perUserLimit: 1 });
    const front = await join(sale.saleId, "quiet-front");
    expect((await join(sale.saleId, "quiet-next")).verdict).not.toBe("admitted");
    const token = front.admission?.token ?? "";
    let quietEnds = 0;
    await haltedAdmissionSurvives(sale, { userId: "quiet-front", token }, "quiet-next", {
      begin: async () => {
        quietEnds = Date.now() + 12_000;
        expect((await app.api.admin("POST", `/sales/${sale.saleId}/rebuild`)).status).toBe(200);
      },
      // the quiet period ends by itself
      end: () => sleep(Math.max(0, quietEnds - Date.now()) + 500),
      refusal: [503, "UNAVAILABLE"],
    });
  }, 60_000);
});

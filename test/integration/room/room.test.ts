import { createHash } from "node:crypto";
import { solveChallenge } from "altcha-lib/v1";
import { describe, expect, it } from "vitest";
import { signAdmission } from "../../../src/room/admission-token";
import { appForFile } from "../../support/app-per-file";
import { commandCounts, commandDelta, snapshot } from "../../support/redis-inspect";
import { JWT_SECRET, shopperToken } from "../../support/shopper";
import { openEvents } from "../../support/sse";

const ADMISSION_SECRET = "admission-secret-for-tests-only";
const app = appForFile({
  vars: {
    RATE_LIMIT_USER_PER_WINDOW: "1000",
    SHOPPER_LIMIT_USER_PER_WINDOW: "1000",
    ADMISSION_SECRET,
    // an admission holds its units 8 s, then 2 s + 2 s of grace (a buy checked just before the end)
    ADMISSION_WINDOW_SECONDS: "8",
    BUY_RESOLVE_WINDOW_MS: "2000",
  },
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

describe("a queue with less stock than shoppers", () => {
  it("admits in order while units cover, never sells past the cutoff, offers a returned unit once", async () => {
    const sale = await app.api.createSale({ admission: "queue", stock: 3, perUserLimit: 1 });
    const users = Array.from({ length: 8 }, (_, i) => `w${i}`);
    const tickets = new Map<string, Ticket>();
    for (const u of users) tickets.set(u, (await join(sale.saleId, u)).body);
    expect(users.map((u) => tickets.get(u)?.position)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(users.slice(0, 3).map((u) => tickets.get(u)?.verdict)).toEqual([
      "admitted",
      "admitted",
      "admitted",
    ]);

    // the waiter at position 4 watches its ticket; the room's feed steps the room with the paid units
    const stream = await openEvents(`${app.worker.url}/api/sales/${sale.saleId}/queue/events`, {
      Authorization: `Bearer ${await shopperToken("w3")}`,
    });
    expect(stream.status).toBe(200);
    const firstEvent = await stream.next((e) => e.event === "ticket");
    expect(firstEvent.json).toMatchObject({ ticketId: tickets.get("w3")?.ticketId, position: 4 });
    expect(firstEvent.json.verdict).toBe("may_get");

    // every unit not paid may come back, once per admission cycle left: nobody is told will_not_get yet
    expect((await me(sale.saleId, "w7")).body.verdict).toBe("may_get");

    const orders: string[] = [];
    for (const u of users.slice(0, 3)) {
      const res = await app.api.buy(sale.productToken, u, 1, {
        Admission: tickets.get(u)?.admission?.token ?? "",
      });
      expect(res.status).toBe(202);
      orders.push(String(res.body.orderId));
    }
    // sold out now: a process that knows it may answer 410 ahead of the admission check (contract)
    const late = await app.api.buy(sale.productToken, "w7", 1);
    expect([
      [403, "NOT_ADMITTED"],
      [410, "SOLD_OUT"],
    ]).toContainEqual([late.status, errorCode(late.body)]);

    // one unit comes back: it stays held for w0 until its admission lapses, then exactly the next
    // ticket is admitted, and told so on its stream
    expect((await app.api.order(orders[0] as string, "w0", "cancel")).status).toBe(200);
    const admitted = await stream.next((e) => e.json.verdict === "admitted", { timeoutMs: 30_000 });
    const admission = admitted.json.admission as { token: string };
    expect(admission.token).toBeTruthy();
    stream.close();
    orders[0] = String(
      (
        await until(
          () => app.api.buy(sale.productToken, "w3", 1, { Admission: admission.token }),
          (r) => r.status === 202,
        )
      ).body.orderId,
    );
    // every unit paid: none can come back, so everyone past the frontier is told will_not_get at once
    for (const [i, u] of [
      [0, "w3"],
      [1, "w1"],
      [2, "w2"],
    ] as const) {
      const paid = await until(
        () => app.api.order(orders[i] as string, u, "pay"),
        (r) => r.status === 200,
      );
      expect(paid.body.status).toBe("paid");
    }
    await until(
      async () => {
        await app.api.admin("GET", `/sales/${sale.saleId}/queue`); // a step with the paid units
        return me(sale.saleId, "w4");
      },
      (r) => r.body.verdict === "will_not_get",
    );
    const after = new Map<string, Ticket>();
    for (const u of users) after.set(u, (await me(sale.saleId, u)).body);
    expect(users.map((u) => after.get(u)?.position)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    const passed = users.filter((u) => ["admitted", "lapsed"].includes(after.get(u)?.verdict ?? ""));
    expect(passed).toEqual(["w0", "w1", "w2", "w3"]);
    expect(users.slice(4).map((u) => after.get(u)?.verdict)).toEqual(Array(4).fill("will_not_get"));
    expect(after.get("w3")?.frontier).toBe(4);

    const figures = await app.api.admin("GET", `/sales/${sale.saleId}/queue`);
    expect(figures.status).toBe(200);
    expect(figures.body).toMatchObject({ tickets: 8, sealed: true, frontier: 4, cutoff: 4 });
    const verdicts = figures.body.verdicts as Record<string, number>;
    expect([verdicts.may_get ?? 0, verdicts.will_not_get, verdicts.will_get ?? 0]).toEqual([0, 4, 0]);
    expect((verdicts.admitted ?? 0) + (verdicts.passed ?? 0)).toBe(4);

    // nobody told will_not_get holds a unit; no oversell
    const holdings = await app.redis.hgetall(`sale:{s:${sale.saleId}}:holdings`);
    expect(users.slice(4).reduce((n, u) => n + Number(holdings[u] ?? 0), 0)).toBe(0);
    const sold = Object.values(holdings).reduce((s, n) => s + Number(n), 0);
    expect(sold).toBe(3);
    expect(Number(await app.redis.get(`sale:{s:${sale.saleId}}:stock`))).toBe(0);
  });
});

describe("a draw", () => {
  it("publishes the seed's hash at creation, draws at the start, and anyone can recompute the order", async () => {
    const startsAt = Date.now() + 4000;
    const sale = await app.api.createSale({
      admission: "draw",
      stock: 2,
      perUserLimit: 1,
      startsAt: new Date(startsAt).toISOString(),
    });
    const before = await app.api.call("GET", `/api/sales/${sale.saleId}/draw`);
    expect(before.status).toBe(200);
    expect(Object.keys(before.body)).toEqual(["seedHash"]);
    const users = ["d0", "d1", "d2", "d3", "d4", "d5"];
    const ids = new Map<string, string>();
    for (const u of users) {
      const t = (await join(sale.saleId, u)).body;
      expect(t.verdict).toBe("may_get");
      ids.set(u, t.ticketId);
    }
    await new Promise((r) => setTimeout(r, Math.max(0, startsAt - Date.now()) + 500));
    const closed = await join(sale.saleId, "d9");
    expect([closed.status, errorCode(closed.body)]).toEqual([409, "ENTRIES_CLOSED"]);
    const draw = (await app.api.call("GET", `/api/sales/${sale.saleId}/draw`)).body as {
      seedHash: string;
      seed: string;
      entries: string[];
      entriesHash: string;
      drawnAt: string;
    };
    expect(draw.seedHash).toBe(before.body.seedHash);
    expect(sha256(draw.seed)).toBe(draw.seedHash);
    expect(draw.entries).toEqual([...ids.values()].sort());
    expect(sha256(draw.entries.join("\n"))).toBe(draw.entriesHash);
    const order = [...draw.entries].sort((a, b) => {
      const x = sha256(`${draw.seed}:${a}`);
      const y = sha256(`${draw.seed}:${b}`);
      return x < y ? -1 : x > y ? 1 : 0;
    });
    for (const u of users) {
      const t = (await me(sale.saleId, u)).body;
      expect(t.position, u).toBe(order.indexOf(ids.get(u) as string) + 1);
      expect(t.verdict, u).toBe(t.position <= 2 ? "admitted" : "may_get");
    }
  });
});

describe("a proof of work to join", () => {
  it("refuses a missing or wrong solution before the store, and takes a solved challenge", async () => {
    const sale = await app.api.createSale({ admission: "queue", proofOfWork: true });
    const roomKey = `sale:{s:${sale.saleId}}:q:tickets`;
    const missing = await join(sale.saleId, "p1");
    expect([missing.status, errorCode(missing.body)]).toEqual([403, "CHALLENGE_FAILED"]);
    const challengeFor = async (userId: string) =>
      (
        await app.api.call<{
          algorithm: string;
          challenge: string;
          salt: string;
          signature: string;
          maxnumber: number;
        }>("GET", `/api/sales/${sale.saleId}/queue/challenge`, { token: await shopperToken(userId) })
      ).body;
    const challenge = await challengeFor("p1");
    expect(challenge.maxnumber).toBeGreaterThan(0);
    const solution = await solveChallenge(
      challenge.challenge,
      challenge.salt,
      challenge.algorithm,
      challenge.maxnumber,
    ).promise;
    expect(solution).not.toBeNull();
    const payload = (number: number) => btoa(JSON.stringify({ ...challenge, maxnumber: undefined, number }));
    const wrong = await join(sale.saleId, "p1", { challenge: payload((solution?.number ?? 0) + 1) });
    expect([wrong.status, errorCode(wrong.body)]).toEqual([403, "CHALLENGE_FAILED"]);
    const stolen = await join(sale.saleId, "p2", { challenge: payload(solution?.number ?? 0) });
    expect([stolen.status, errorCode(stolen.body)]).toEqual([403, "CHALLENGE_FAILED"]);
    expect(await app.redis.exists(roomKey)).toBe(0);
    const ok = await join(sale.saleId, "p1", { challenge: payload(solution?.number ?? 0) });
    expect(ok.status).toBe(200);
    expect(ok.body.verdict).toBe("admitted");
    // a join without a solution never reaches the store, even for a shopper with a ticket (it reads its
    // ticket with queue/me); joining again with a new solution is the same ticket
    const bare = await join(sale.saleId, "p1");
    expect([bare.status, errorCode(bare.body)]).toEqual([403, "CHALLENGE_FAILED"]);
    expect((await me(sale.saleId, "p1")).body.ticketId).toBe(ok.body.ticketId);
    const next = await challengeFor("p1");
    const nextSolution = await solveChallenge(next.challenge, next.salt, next.algorithm, next.maxnumber)
      .promise;
    const again = await join(sale.saleId, "p1", {
      challenge: btoa(JSON.stringify({ ...next, maxnumber: undefined, number: nextSolution?.number ?? 0 })),
    });
    expect([again.status, again.body.ticketId]).toEqual([200, ok.body.ticketId]);
    const stillRefused = await join(sale.saleId, "p2");
    expect([stillRefused.status, errorCode(stillRefused.body)]).toEqual([403, "CHALLENGE_FAILED"]);
  });
});

describe("a crowd for a few units", () => {
  it("300 shoppers, 40 units: no oversell, nobody told will_not_get gets a unit, places never move", async () => {
    const sale = await app.api.createSale({ admission: "queue", stock: 40, perUserLimit: 2 });
    const users = Array.from({ length: 300 }, (_, i) => `c${i}`);
    const seen = new Map<string, { position: number; verdicts: Set<string> }>();
    const note = (u: string, t: Ticket) => {
      const entry = seen.get(u) ?? { position: t.position, verdicts: new Set<string>() };
      expect(t.position, u).toBe(entry.position);
      entry.verdicts.add(t.verdict);
      seen.set(u, entry);
    };
    for (let i = 0; i < users.length; i += 25) {
      const batch = users.slice(i, i + 25);
      const joined = await Promise.all(batch.map((u) => join(sale.saleId, u)));
      joined.forEach((r, j) => {
        note(batch[j] as string, r.body);
      });
    }
    // the feed's step (with the paid units) sets the cutoff
    await app.api.admin("GET", `/sales/${sale.saleId}/queue`);
    const buyers: string[] = [];
    const orders = new Map<string, string>();
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < users.length; i += 25) {
        const batch = users.slice(i, i + 25);
        const reads = await Promise.all(batch.map((u) => me(sale.saleId, u)));
        await Promise.all(
          reads.map(async (r, j) => {
            const u = batch[j] as string;
            note(u, r.body);
            const token = r.body.admission?.token;
            if (r.body.verdict !== "admitted" || !token || buyers.includes(u)) return;
            const res = await app.api.buy(sale.productToken, u, 2, { Admission: token });
            expect([202, 409]).toContain(res.status);
            if (res.status === 202) {
              buyers.push(u);
              orders.set(u, String(res.body.orderId));
            }
          }),
        );
      }
    }
    // every unit sold is paid: nothing can come back, and every waiter past the frontier is told so
    for (const [u, orderId] of orders) {
      const paid = await until(
        () => app.api.order(orderId, u, "pay"),
        (r) => r.status === 200,
      );
      expect(paid.body.status, u).toBe("paid");
    }
    // a step with the paid units (the room feed's tick, the sweep's, or this operator read) lowers the cutoff
    await until(
      async () => {
        await app.api.admin("GET", `/sales/${sale.saleId}/queue`);
        return me(sale.saleId, users.at(-1) as string);
      },
      (r) => r.body.verdict === "will_not_get",
    );
    for (let i = 0; i < users.length; i += 25) {
      const batch = users.slice(i, i + 25);
      const reads = await Promise.all(batch.map((u) => me(sale.saleId, u)));
      reads.forEach((r, j) => {
        note(batch[j] as string, r.body);
      });
    }
    const holdings = await app.redis.hgetall(`sale:{s:${sale.saleId}}:holdings`);
    const sold = Object.values(holdings).reduce((s, n) => s + Number(n), 0);
    expect(sold).toBeLessThanOrEqual(40);
    expect(Number(await app.redis.get(`sale:{s:${sale.saleId}}:stock`))).toBe(40 - sold);
    for (const [u, units] of Object.entries(holdings)) {
      if (Number(units) > 0) expect(seen.get(u)?.verdicts.has("will_not_get"), u).toBe(false);
    }
    const told = [...seen.values()].filter((e) => e.verdicts.has("will_not_get")).length;
    expect(told).toBeGreaterThan(200);
    expect(sold).toBe(40);
  });
});

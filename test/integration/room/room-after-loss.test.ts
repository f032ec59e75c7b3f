import { describe, expect, it } from "vitest";
import { saleKeys } from "../../../src/stock/keys";
import { appForFile } from "../../support/app-per-file";
import { roomShoppers, type Ticket } from "../../support/room-shoppers";

/*
 * A waiting room through a Redis loss (issue 30, item 6): Redis restarted empty under a queue or draw
 * sale, the sale rebuilt from Postgres by the sweep. Every promise the room made before the loss holds
 * after it: a ticket's place, an admission's units, a `will_not_get`, the draw's seed and entries; and a
 * room lost before its start does not wait a window at the drop for admissions that never were.
 */

const app = appForFile({
  // Redis paused, restarted or flushed here: the stack's one server, whatever the suite's layout
  oneServer: true,
  vars: {
    RATE_LIMIT_USER_PER_WINDOW: "1000",
    SHOPPER_LIMIT_USER_PER_WINDOW: "1000",
    ADMISSION_SECRET: "admission-secret-for-tests-only",
    // an admission holds its units 6 s, then 2 s + 2 s of grace
    ADMISSION_WINDOW_SECONDS: "6",
    BUY_RESOLVE_WINDOW_MS: "2000",
    RECOVERY_QUIET_SECONDS: "1",
  },
});
const { join, me, loseRedis } = roomShoppers(app);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (ok(value) || Date.now() > deadline) return value;
    await sleep(200);
  }
}

/** What every shopper's ticket says (a `me` read steps the room, as a shopper's look does). */
async function tickets(saleId: string, users: string[]) {
  const shown = new Map<string, Ticket>();
  for (const u of users) {
    const res = await me(saleId, u);
    expect(res.status, `${u}: ${JSON.stringify(res.body)}`).toBe(200);
    shown.set(u, res.body);
  }
  return shown;
}

describe("a join answered is in Postgres", () => {
  it("the ticket the answer shows is in the room's record before the answer", async () => {
    const sale = await app.api.createSale({ admission: "queue", stock: 1, perUserLimit: 1 });
    for (const u of ["j1", "j2", "j3"]) {
      const res = await join(sale.saleId, u);
      expect(res.status).toBe(200);
      const row = await app.db.query("select ticket from room_tickets where sale_id = $1 and user_id = $2", [
        sale.saleId,
        u,
      ]);
      expect(row.rows[0]?.ticket).toMatchObject({ id: res.body.ticketId });
    }
    // the seed is recorded from the creation: the hash published is the recorded seed's
    const record = await app.db.query("select seed_hash from room_records where sale_id = $1", [sale.saleId]);
    const draw = await app.api.call("GET", `/api/sales/${sale.saleId}/draw`);
    expect(record.rows[0]?.seed_hash).toBe(draw.body.seedHash);
  });
});

describe("a queue through a Redis loss", () => {
  it("keeps every place, the running admission and its units, and every will_not_get", async () => {
    const sale = await app.api.createSale({ admission: "queue", stock: 3, perUserLimit: 1 });
    const users = ["q0", "q1", "q2", "q3", "q4", "q5"];
    const joined = new Map<string, Ticket>();
    for (const u of users) joined.set(u, (await join(sale.saleId, u)).body);
    expect(users.map((u) => joined.get(u)?.verdict)).toEqual([
      "admitted",
      "admitted",
      "admitted",
      "may_get",
      "may_get",
      "may_get",
    ]);
    // q0 and q1 buy and pay; q2 holds its unit without buying yet
    for (const u of ["q0", "q1"]) {
      const bought = await app.api.buy(sale.productToken, u, 1, {
        Admission: joined.get(u)?.admission?.token ?? "",
      });
      expect(bought.status).toBe(202);
      const paid = await until(
        () => app.api.order(String(bought.body.orderId), u, "pay"),
        (r) => r.status === 200,
      );
      expect(paid.body.status).toBe("paid");
    }
    // q2 buys its unit and pays: every unit paid, so everyone past the frontier is told will_not_get
    const q2 = await app.api.buy(sale.productToken, "q2", 1, {
      Admission: joined.get("q2")?.admission?.token ?? "",
    });
    expect(q2.status).toBe(202);
    await until(
      () => app.api.order(String(q2.body.orderId), "q2", "pay"),
      (r) => r.status === 200,
    );
    await until(
      async () => {
        await app.api.admin("GET", `/sales/${sale.saleId}/queue`); // a step with the paid units
        return me(sale.saleId, "q3");
      },
      (r) => r.body.verdict === "will_not_get",
    );
    const before = await tickets(sale.saleId, users);
    expect(users.slice(3).map((u) => before.get(u)?.verdict)).toEqual(Array(3).fill("will_not_get"));

    await loseRedis(sale.saleId);

    // the operator adds two units after the loss: the cutoff, kept, still leaves them to nobody told
    // will_not_get (a room that forgot its cutoff would admit q3 and q4 with them)
    await until(
      () => app.api.admin("POST", `/sales/${sale.saleId}/stock`, { delta: 2 }),
      (r) => r.status === 200,
    );
    await sleep(1_500); // past the quiet period
    const after = await tickets(sale.saleId, users);
    for (const u of users) {
      expect(after.get(u)?.ticketId, u).toBe(before.get(u)?.ticketId);
      expect(after.get(u)?.position, u).toBe(before.get(u)?.position);
    }
    expect(users.slice(3).map((u) => after.get(u)?.verdict)).toEqual(Array(3).fill("will_not_get"));
    // joining again is the same ticket, still not admitted
    const again = await join(sale.saleId, "q3");
    expect([again.body.ticketId, again.body.verdict]).toEqual([before.get("q3")?.ticketId, "will_not_get"]);
    const holdings = await app.redis.hgetall(saleKeys(sale.saleId).holdings);
    expect(["q3", "q4", "q5"].map((u) => Number(holdings[u] ?? 0))).toEqual([0, 0, 0]);
  });

  it("an admission running at the loss keeps its units: the shopper buys after, the next in line waits", async () => {
    const sale = await app.api.createSale({ admission: "queue", stock: 2, perUserLimit: 1 });
    const users = ["r0", "r1", "r2"];
    const joined = new Map<string, Ticket>();
    for (const u of users) joined.set(u, (await join(sale.saleId, u)).body);
    expect(users.map((u) => joined.get(u)?.verdict)).toEqual(["admitted", "admitted", "may_get"]);
    expect(
      (await app.api.buy(sale.productToken, "r0", 1, { Admission: joined.get("r0")?.admission?.token ?? "" }))
        .status,
    ).toBe(202);

    await loseRedis(sale.saleId);

    const after = await tickets(sale.saleId, users);
    expect(users.map((u) => after.get(u)?.position)).toEqual([1, 2, 3]);
    expect(after.get("r1")?.verdict).toBe("admitted");
    expect(after.get("r2")?.verdict).not.toBe("admitted");
    // r1 buys with the admission it was given before the loss (its end moved by the quiet period)
    const bought = await until(
      () => app.api.buy(sale.productToken, "r1", 1, { Admission: joined.get("r1")?.admission?.token ?? "" }),
      (r) => r.status !== 503,
    );
    expect(bought.status).toBe(202);
    expect((await me(sale.saleId, "r2")).body.verdict).not.toBe("admitted");
    expect(Number(await app.redis.get(saleKeys(sale.saleId).stock))).toBe(0);
  });
});

describe("a draw through a Redis loss", () => {
  it("keeps its seed, entries and winners; takes no new entry; a winner's lapsed unit goes to the first backup", async () => {
    const startsAt = Date.now() + 3_000;
    const sale = await app.api.createSale({
      admission: "draw",
      stock: 1,
      perUserLimit: 1,
      startsAt: new Date(startsAt).toISOString(),
    });
    const users = ["d0", "d1", "d2", "d3"];
    for (const u of users) expect((await join(sale.saleId, u)).status).toBe(200);
    await sleep(Math.max(0, startsAt - Date.now()) + 200);
    const drawn = await until(
      () => app.api.call("GET", `/api/sales/${sale.saleId}/draw`),
      (r) => typeof r.body.seed === "string",
    );
    const before = await tickets(sale.saleId, users);
    const winner = users.find((u) => before.get(u)?.verdict === "admitted") as string;
    expect(winner).toBeDefined();

    await loseRedis(sale.saleId);

    const redrawn = await app.api.call("GET", `/api/sales/${sale.saleId}/draw`);
    expect(redrawn.body).toEqual(drawn.body);
    const after = await tickets(sale.saleId, users);
    for (const u of users) expect(after.get(u)?.position, u).toBe(before.get(u)?.position);
    expect(after.get(winner)?.verdict).toBe("admitted");
    const late = await join(sale.saleId, "d-late");
    expect(late.status).toBe(409);
    // the winner never buys: at its admission's end (+ grace) the first backup is admitted
    const backup = users.find((u) => before.get(u)?.position === 2) as string;
    const promoted = await until(
      async () => {
        await app.api.admin("GET", `/sales/${sale.saleId}/queue`); // a tick: lapses and promotions
        return me(sale.saleId, backup);
      },
      (r) => r.body.verdict === "admitted",
      30_000,
    );
    expect(promoted.body.verdict).toBe("admitted");
    const bought = await app.api.buy(sale.productToken, backup, 1, {
      Admission: promoted.body.admission?.token ?? "",
    });
    expect(bought.status).toBe(202);
  });
});

describe("a room lost before its start, rebuilt after it", () => {
  it("admits at the start from the tickets it kept, without waiting an admission window", async () => {
    const startsAt = Date.now() + 4_000;
    const sale = await app.api.createSale({
      admission: "queue",
      stock: 2,
      perUserLimit: 1,
      startsAt: new Date(startsAt).toISOString(),
    });
    const users = ["b0", "b1", "b2"];
    const joined = new Map<string, Ticket>();
    for (const u of users) joined.set(u, (await join(sale.saleId, u)).body);
    await loseRedis(sale.saleId);
    await sleep(Math.max(0, startsAt - Date.now()) + 1_200); // the start, and the quiet period
    const after = await until(
      () => tickets(sale.saleId, users),
      (shown) => [...shown.values()].filter((t) => t.verdict === "admitted").length === 2,
      4_000,
    );
    for (const u of users) expect(after.get(u)?.ticketId, u).toBe(joined.get(u)?.ticketId);
    expect([...after.values()].filter((t) => t.verdict === "admitted")).toHaveLength(2);
  });
});

import type { Redis } from "ioredis";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { RedisProcess } from "../../../local/redis-process";
import { toMetaFields, type VariantDefinition } from "../../../src/catalog/sale-record";
import { ScriptCode as C } from "../../../src/stock/codes";
import { debitStock } from "../../../src/stock/debit";
import { saleKeys } from "../../../src/stock/keys";
import { encodeLedgerEntry, parseLedgerEntry } from "../../../src/stock/ledger-entry";
import { initSale } from "../../../src/stock/preheat";
import { type RebuiltState, replaceSaleState } from "../../../src/stock/replace-state";
import { type ReserveLine, reserveScriptCall } from "../../../src/stock/reserve-call";
import { restoreStock } from "../../../src/stock/restore";
import { voidReservation } from "../../../src/stock/void";
import { connectRedisTcp, type RedisTcpStore } from "../../../src/stores/redis-tcp";
import { lua } from "../../support/lua";
import { redisServerForFile } from "../../support/redis-per-file";

/*
 * Every path that gives units back (restore on expiry or cancellation, the void of an attempt given
 * up, the late count of an order write) must do it per variant on a drop, exactly once: the variants'
 * units (vstock) always add up to the sale's, and their holdings (vholdings) to each shopper's.
 */

let redis: Redis;
let server: RedisProcess;
let store: RedisTcpStore;
const now = 1_800_000_000_000;
let saleId = "";
let n = 0;
const orderId = () => `${saleId}-o${++n}`;

redisServerForFile((connection, started) => {
  redis = connection;
  server = started;
});
beforeAll(() => {
  store = connectRedisTcp(server.url);
});
afterAll(async () => {
  await store?.close();
});
beforeEach(() => {
  saleId = `s${Math.random().toString(36).slice(2, 13).padEnd(11, "0")}`;
});

const DROP: (VariantDefinition & { stock: number })[] = [
  { variantId: "S", name: "Small", priceCents: 1000, stock: 5 },
  { variantId: "M", name: "Medium", priceCents: 1200, stock: 4, perUserLimit: 3 },
  { variantId: "L", name: "Large", priceCents: 1500, stock: 3 },
];

/** A sale preheated as createSale does: for a drop, each variant's units in vstock. */
async function preheat(variants: (VariantDefinition & { stock: number })[], perUserLimit = 10) {
  const perVariant = variants.length > 1;
  await initSale(
    store,
    saleId,
    metaOf(variants, perUserLimit),
    perVariant ? Object.fromEntries(variants.map((v) => [v.variantId, v.stock])) : undefined,
  );
}

function metaOf(variants: (VariantDefinition & { stock: number })[], perUserLimit = 10) {
  const stock = variants.reduce((s, v) => s + v.stock, 0);
  return toMetaFields({
    saleId,
    productId: `p-${saleId}`,
    name: "Drop",
    priceCents: Math.min(...variants.map((v) => v.priceCents)),
    perUserLimit,
    startsAt: now - 1000,
    endsAt: now + 3_600_000,
    paused: false,
    paymentWindowMs: 60_000,
    stock,
    initialStock: stock,
    productToken: `t-${saleId}`,
    variants,
  });
}

type Cart = Record<string, number>;

/** Reserves a cart through reserve-stock.lua, as the buy route does; the reply. */
async function reserveCart(userId: string, cart: Cart, opts: { perVariant?: boolean; id?: string } = {}) {
  const lines: ReserveLine[] = Object.entries(cart).map(([variantId, quantity]) => ({
    variantId,
    quantity,
    priceCents: DROP.find((v) => v.variantId === variantId)?.priceCents ?? 1000,
    cap: DROP.find((v) => v.variantId === variantId)?.perUserLimit ?? 0,
  }));
  const id = opts.id ?? orderId();
  const { keys, args } = reserveScriptCall(
    {
      saleId,
      orderId: id,
      userId,
      ip: "127.0.0.1",
      quantity: lines.reduce((s, l) => s + l.quantity, 0),
      idempotencyKey: null,
      now,
      lines,
      perVariant: opts.perVariant ?? true,
    },
    { userPerWindow: 1000, ipPerWindow: 1_000_000, windowMs: 1000 },
  );
  const reply = (await redis.eval(lua("reserve-stock"), keys.length, ...keys, ...args)) as (
    | string
    | number
  )[];
  expect(reply[0], `reserve ${JSON.stringify(cart)} for ${userId}`).toBe(C.OK);
  return { orderId: id, userId, quantity: Number(reply[2]), items: itemsOf(cart) };
}

const itemsOf = (cart: Cart) =>
  Object.entries(cart).map(([variantId, quantity]) => ({ variantId, quantity }));

/** The sale's Redis state, numbers only. */
async function state() {
  const k = saleKeys(saleId);
  const [stock, holdings, vstock, vholdings] = await Promise.all([
    redis.get(k.stock),
    redis.hgetall(k.holdings),
    redis.hgetall(k.variantStock),
    redis.hgetall(k.variantHoldings),
  ]);
  const nums = (h: Record<string, string>) =>
    Object.fromEntries(Object.entries(h).map(([f, v]) => [f, Number(v)]));
  return { stock: Number(stock), holdings: nums(holdings), vstock: nums(vstock), vholdings: nums(vholdings) };
}

/** The drop's books balance: the variants' units add up to the sale's, their holdings to each shopper's. */
async function expectBalanced() {
  const s = await state();
  const sum = (o: Record<string, number>) => Object.values(o).reduce((a, b) => a + b, 0);
  expect(sum(s.vstock), "vstock adds up to stock").toBe(s.stock);
  const perUser: Record<string, number> = {};
  for (const [field, units] of Object.entries(s.vholdings)) {
    const user = field.slice(field.indexOf(":") + 1);
    perUser[user] = (perUser[user] ?? 0) + units;
    expect(units, `vholdings ${field} positive`).toBeGreaterThan(0);
  }
  expect(perUser, "vholdings add up to holdings").toEqual(s.holdings);
  return s;
}

describe("restore-stock.lua on a drop of three variants", () => {
  it("gives a cancelled cart's units back to each variant, once, however often it runs", async () => {
    await preheat(DROP);
    const cart = await reserveCart("ana", { S: 2, L: 1 });
    const kept = await reserveCart("ana", { S: 1 });
    expect(await expectBalanced()).toMatchObject({
      stock: 8,
      vstock: { S: 2, M: 4, L: 2 },
      vholdings: { "S:ana": 3, "L:ana": 1 },
    });

    const first = await restoreStock(store, { saleId, ...cart }, "cancelled", now);
    expect(first).toEqual({ kind: "restored", remaining: 11 });
    expect(await expectBalanced()).toMatchObject({
      stock: 11,
      holdings: { ana: 1 },
      vstock: { S: 4, M: 4, L: 3 },
      vholdings: { "S:ana": 1 },
    });
    // again, sequentially and all at once: nothing more comes back
    expect(await restoreStock(store, { saleId, ...cart }, "expired", now)).toEqual({
      kind: "already_restored",
      remaining: 11,
    });
    const again = await Promise.all(
      Array.from({ length: 8 }, () => restoreStock(store, { saleId, ...cart }, "cancelled", now)),
    );
    expect(again.every((o) => o.kind === "already_restored")).toBe(true);
    expect((await expectBalanced()).vstock).toEqual({ S: 4, M: 4, L: 3 });

    // the ledger's restore entry names the lines it gave back
    const x = parseLedgerEntry(await redis.hget(saleKeys(saleId).ledger, `x:${cart.orderId}`));
    expect(x).toMatchObject({ type: "restore", quantity: 3, before: 8, after: 11, reason: "cancelled" });

    await restoreStock(store, { saleId, ...kept }, "expired", now);
    expect(await expectBalanced()).toEqual({
      stock: 12,
      holdings: {},
      vstock: { S: 5, M: 4, L: 3 },
      vholdings: {},
    });
  });

  it("exactly one of many concurrent restores of the same carts gives units back", async () => {
    await preheat(DROP);
    const carts = await Promise.all([
      reserveCart("u1", { S: 1, M: 2 }),
      reserveCart("u2", { M: 1, L: 3 }),
      reserveCart("u3", { S: 4 }),
    ]);
    await expectBalanced();
    const runs = await Promise.all(
      carts.flatMap((c) =>
        Array.from({ length: 5 }, () => restoreStock(store, { saleId, ...c }, "expired", now)),
      ),
    );
    expect(runs.filter((o) => o.kind === "restored")).toHaveLength(3);
    expect(await expectBalanced()).toEqual({
      stock: 12,
      holdings: {},
      vstock: { S: 5, M: 4, L: 3 },
      vholdings: {},
    });
  });

  it("takes the lines from the caller when the reservation entry has none (an entry a rebuild wrote)", async () => {
    await preheat(DROP);
    const cart = await reserveCart("bo", { M: 2, L: 2 });
    // a rebuild's entry: the order's counts, no items
    const k = saleKeys(saleId);
    await redis.hset(
      k.ledger,
      `r:${cart.orderId}`,
      encodeLedgerEntry({
        type: "reserve",
        orderId: cart.orderId,
        userId: "bo",
        quantity: 4,
        at: now,
        epoch: 1,
        rebuilt: true,
      }),
    );
    expect(await restoreStock(store, { saleId, ...cart }, "expired", now)).toMatchObject({
      kind: "restored",
    });
    expect(await expectBalanced()).toMatchObject({ stock: 12, vstock: { S: 5, M: 4, L: 3 }, vholdings: {} });
  });

  it("prefers the entry's own lines (what this Redis counted) over the caller's", async () => {
    await preheat(DROP);
    const cart = await reserveCart("cy", { S: 1, L: 1 });
    // a caller that names other lines (wrong) for the same order: the entry's lines win
    const outcome = await restoreStock(
      store,
      { saleId, ...cart, items: [{ variantId: "M", quantity: 2 }] },
      "expired",
      now,
    );
    expect(outcome).toMatchObject({ kind: "restored" });
    expect(await expectBalanced()).toMatchObject({ vstock: { S: 5, M: 4, L: 3 }, vholdings: {} });
  });

  it("an order this Redis never counted gives nothing back, per variant too, and stays final", async () => {
    await preheat(DROP);
    const id = orderId();
    const outcome = await restoreStock(
      store,
      { saleId, orderId: id, userId: "dee", quantity: 2, items: [{ variantId: "S", quantity: 2 }] },
      "cancelled",
      now,
    );
    expect(outcome).toEqual({ kind: "not_reserved", remaining: 12 });
    expect(await expectBalanced()).toMatchObject({ stock: 12, vstock: { S: 5, M: 4, L: 3 } });
    // its order write arriving later does not count it
    const debit = await debitStock(
      store,
      saleId,
      [{ orderId: id, userId: "dee", quantity: 2, items: [{ variantId: "S", quantity: 2 }] }],
      1,
      now,
    );
    expect(debit).toEqual({ kind: "ok", remaining: 12, debited: 0 });
    expect(await expectBalanced()).toMatchObject({ stock: 12, vstock: { S: 5, M: 4, L: 3 } });
  });

  it("the old call shape (no lines, six keys) still restores a sale of one variant as before", async () => {
    await preheat([{ variantId: "default", name: "One", priceCents: 900, stock: 6 }], 4);
    const cart = await reserveCart("ed", { default: 3 }, { perVariant: false });
    const k = saleKeys(saleId);
    const reply = await redis.eval(
      lua("restore-stock"),
      6,
      k.meta,
      k.stock,
      k.holdings,
      k.ledger,
      k.orders,
      k.outbox,
      String(now),
      cart.orderId,
      "ed",
      "3",
      "expired",
    );
    expect(reply).toEqual([C.OK, 6]);
    // and with lines: a sale of one keeps no per-variant state
    const other = await reserveCart("ed", { default: 2 }, { perVariant: false });
    expect(await restoreStock(store, { saleId, ...other }, "cancelled", now)).toEqual({
      kind: "restored",
      remaining: 6,
    });
    expect(await redis.exists(k.variantStock, k.variantHoldings)).toBe(0);
    expect(await redis.get(k.stock)).toBe("6");
    expect(await redis.hgetall(k.holdings)).toEqual({});
  });
});

describe("void-reservation.lua on a drop", () => {
  it("gives an unclaimed cart back per variant, once, even when voided concurrently", async () => {
    await preheat(DROP);
    const cart = await reserveCart("fay", { S: 2, M: 3 });
    const other = await reserveCart("gus", { M: 1 });
    await expectBalanced();
    const req = { saleId, orderId: cart.orderId, userId: "fay", quantity: 5, idempotencyKey: null };
    const runs = await Promise.all(Array.from({ length: 6 }, () => voidReservation(store, req, now)));
    expect(runs.filter((o) => o.kind === "voided")).toHaveLength(1);
    expect(runs.filter((o) => o.kind === "already_final")).toHaveLength(5);
    const voided = runs.find((o) => o.kind === "voided");
    expect(voided?.kind === "voided" && voided.order.items).toEqual([
      { variantId: "S", quantity: 2, priceCents: 1000 },
      { variantId: "M", quantity: 3, priceCents: 1200 },
    ]);
    expect(await expectBalanced()).toEqual({
      stock: 11,
      holdings: { gus: 1 },
      vstock: { S: 5, M: 3, L: 3 },
      vholdings: { "M:gus": 1 },
    });
    // a restore of the voided order afterwards changes nothing
    expect(await restoreStock(store, { saleId, ...cart }, "cancelled", now)).toMatchObject({
      kind: "already_restored",
    });
    expect((await expectBalanced()).vstock).toEqual({ S: 5, M: 3, L: 3 });
    await restoreStock(store, { saleId, ...other }, "cancelled", now);
    expect(await expectBalanced()).toMatchObject({ stock: 12, vstock: { S: 5, M: 4, L: 3 }, vholdings: {} });
  });

  it("a void racing restores of the same cart: units come back once in all", async () => {
    await preheat(DROP);
    const cart = await reserveCart("hal", { L: 3, S: 1 });
    const req = { saleId, orderId: cart.orderId, userId: "hal", quantity: 4, idempotencyKey: null };
    const runs = await Promise.all([
      voidReservation(store, req, now),
      restoreStock(store, { saleId, ...cart }, "cancelled", now),
      voidReservation(store, req, now),
      restoreStock(store, { saleId, ...cart }, "expired", now),
    ]);
    expect(runs.filter((o) => o.kind === "voided" || o.kind === "restored")).toHaveLength(1);
    expect(await expectBalanced()).toEqual({
      stock: 12,
      holdings: {},
      vstock: { S: 5, M: 4, L: 3 },
      vholdings: {},
    });
  });

  it("the old call shape (seven keys) still voids a sale of one variant", async () => {
    await preheat([{ variantId: "default", name: "One", priceCents: 900, stock: 6 }], 4);
    const cart = await reserveCart("ida", { default: 2 }, { perVariant: false });
    const k = saleKeys(saleId);
    const reply = (await redis.eval(
      lua("void-reservation"),
      7,
      k.meta,
      k.stock,
      k.holdings,
      k.ledger,
      k.orders,
      k.outbox,
      k.idempotency("ida", "-"),
      String(now),
      cart.orderId,
      "ida",
      "2",
      "0",
    )) as (string | number)[];
    expect(reply[0]).toBe(C.OK);
    expect(await redis.get(k.stock)).toBe("6");
    expect(await redis.exists(k.variantStock, k.variantHoldings)).toBe(0);
  });
});

describe("debit-stock.lua on a drop", () => {
  it("counts a late order per variant once, and its restore gives it back per variant", async () => {
    await preheat(DROP);
    const id = orderId();
    const late = {
      orderId: id,
      userId: "jo",
      quantity: 4,
      items: [
        { variantId: "S", quantity: 1, priceCents: 1000 },
        { variantId: "L", quantity: 3, priceCents: 1500 },
      ],
    };
    const runs = await Promise.all(
      Array.from({ length: 4 }, () => debitStock(store, saleId, [late], 1, now)),
    );
    expect(runs.map((r) => (r.kind === "ok" ? r.debited : -1)).sort()).toEqual([0, 0, 0, 1]);
    expect(await expectBalanced()).toEqual({
      stock: 8,
      holdings: { jo: 4 },
      vstock: { S: 4, M: 4, L: 0 },
      vholdings: { "S:jo": 1, "L:jo": 3 },
    });
    // the late entry carries the lines: a restore needs none from its caller
    const entry = parseLedgerEntry(await redis.hget(saleKeys(saleId).ledger, `r:${id}`));
    expect(entry).toMatchObject({ type: "reserve", late: true, items: late.items });
    expect(
      await restoreStock(store, { saleId, orderId: id, userId: "jo", quantity: 4 }, "expired", now),
    ).toEqual({
      kind: "restored",
      remaining: 12,
    });
    expect(await expectBalanced()).toEqual({
      stock: 12,
      holdings: {},
      vstock: { S: 5, M: 4, L: 3 },
      vholdings: {},
    });
  });

  it("an order it already counts is left alone; the old call shape still debits a sale of one", async () => {
    await preheat(DROP);
    const cart = await reserveCart("kit", { M: 2 });
    const outcome = await debitStock(
      store,
      saleId,
      [{ ...cart, items: [{ variantId: "M", quantity: 2 }] }],
      1,
      now,
    );
    expect(outcome).toEqual({ kind: "ok", remaining: 10, debited: 0 });
    expect((await expectBalanced()).vstock).toEqual({ S: 5, M: 2, L: 3 });

    saleId = `${saleId}b`;
    await preheat([{ variantId: "default", name: "One", priceCents: 900, stock: 6 }], 4);
    const k = saleKeys(saleId);
    const reply = await redis.eval(
      lua("debit-stock"),
      4,
      k.meta,
      k.stock,
      k.holdings,
      k.ledger,
      String(now),
      "1",
      "late-1",
      "lu",
      "2",
    );
    expect(reply).toEqual([C.OK, 4, 1]);
    expect(await redis.exists(k.variantStock, k.variantHoldings)).toBe(0);
  });
});

describe("rebuild-sale.lua on a drop: what the old Redis knows, corrected per variant", () => {
  /** The state a rebuild computes from Postgres holding `live` (each a cart reserved above) as live. */
  function fromPostgres(live: Awaited<ReturnType<typeof reserveCart>>[], epoch = 2): RebuiltState {
    const remaining: Record<string, number> = Object.fromEntries(DROP.map((v) => [v.variantId, v.stock]));
    const vholdings: Record<string, number> = {};
    const holdings: Record<string, number> = {};
    const ledger: Record<string, string> = {};
    for (const o of live) {
      holdings[o.userId] = (holdings[o.userId] ?? 0) + o.quantity;
      for (const l of o.items) {
        remaining[l.variantId] = (remaining[l.variantId] ?? 0) - l.quantity;
        vholdings[`${l.variantId}:${o.userId}`] = (vholdings[`${l.variantId}:${o.userId}`] ?? 0) + l.quantity;
      }
      ledger[`r:${o.orderId}`] = encodeLedgerEntry({
        type: "reserve",
        orderId: o.orderId,
        userId: o.userId,
        quantity: o.quantity,
        at: now,
        expiresAt: now + 60_000,
        epoch,
        rebuilt: true,
        items: o.items.map((l) => ({ ...l, priceCents: 1000 })),
      });
    }
    const units = live.reduce((s, o) => s + o.quantity, 0);
    return {
      meta: { ...metaOf(DROP), epoch: String(epoch) },
      remaining: 12 - units,
      holdings,
      ledger,
      settled: [],
      recordedAdjustments: [],
      variants: { remaining, holdings: vholdings },
    };
  }

  /** The old per-variant state is wrong (why an operator rebuilds): the rebuild must not build on it. */
  async function drift() {
    const k = saleKeys(saleId);
    await redis.hset(k.variantStock, "S", 99, "XL", 7);
    await redis.del(k.variantHoldings);
  }

  it("counts a queued cart Postgres has not seen in each of its variants, and it restores per variant", async () => {
    await preheat(DROP);
    const written = await reserveCart("ana", { S: 2, L: 1 });
    const queued = await reserveCart("bo", { M: 2, L: 1 });
    await drift();
    const replaced = await replaceSaleState(store, saleId, fromPostgres([written]));
    expect(replaced.kind === "rebuilt" && replaced.kept.map((o) => [o.orderId, o.items])).toEqual([
      [
        queued.orderId,
        [
          { variantId: "M", quantity: 2, priceCents: 1200 },
          { variantId: "L", quantity: 1, priceCents: 1500 },
        ],
      ],
    ]);
    expect(await expectBalanced()).toEqual({
      stock: 6,
      holdings: { ana: 3, bo: 3 },
      vstock: { S: 3, M: 2, L: 1 },
      vholdings: { "S:ana": 2, "L:ana": 1, "M:bo": 2, "L:bo": 1 },
    });
    expect(await redis.hget(saleKeys(saleId).meta, "variants")).toBe(
      JSON.stringify(DROP.map(({ stock: _, ...v }) => v)),
    );
    for (const cart of [written, queued]) await restoreStock(store, { saleId, ...cart }, "expired", now);
    expect(await expectBalanced()).toEqual({
      stock: 12,
      holdings: {},
      vstock: { S: 5, M: 4, L: 3 },
      vholdings: {},
    });
  });

  it("a cart restored after Postgres was read comes back per variant, once", async () => {
    await preheat(DROP);
    const cart = await reserveCart("cy", { M: 2, S: 1 });
    const other = await reserveCart("dee", { M: 1 });
    const read = fromPostgres([cart, other]);
    // the cancel lands between the rebuild's Postgres read and its script
    await restoreStock(store, { saleId, ...cart }, "cancelled", now);
    await drift();
    await replaceSaleState(store, saleId, read);
    expect(await expectBalanced()).toEqual({
      stock: 11,
      holdings: { dee: 1 },
      vstock: { S: 5, M: 3, L: 3 },
      vholdings: { "M:dee": 1 },
    });
    // the restore's entry is kept: running it again gives nothing more back
    expect(await restoreStock(store, { saleId, ...cart }, "cancelled", now)).toMatchObject({
      kind: "already_restored",
    });
    expect((await expectBalanced()).vstock).toEqual({ S: 5, M: 3, L: 3 });
  });

  it("an adjustment the old Redis applied and Postgres has not recorded moves its own variant", async () => {
    await preheat(DROP);
    const k = saleKeys(saleId);
    await redis.hset(
      k.ledger,
      "a:adj-1",
      JSON.stringify({
        type: "adjust",
        adjustmentId: "adj-1",
        variantId: "L",
        delta: 2,
        before: 12,
        after: 14,
        at: now,
        epoch: 1,
      }),
    );
    const replaced = await replaceSaleState(store, saleId, fromPostgres([]));
    expect(replaced.kind === "rebuilt" && replaced.keptAdjustments).toEqual([
      { id: "adj-1", delta: 2, epoch: 2, variantId: "L" },
    ]);
    expect(await expectBalanced()).toMatchObject({ stock: 14, vstock: { S: 5, M: 4, L: 5 } });
    expect(await redis.hget(k.meta, "stock")).toBe("14");
  });

  it("a sale of one variant is rebuilt as before: no per-variant state", async () => {
    const one = [{ variantId: "default", name: "One", priceCents: 900, stock: 6 }];
    await preheat(one, 4);
    const queued = await reserveCart("ed", { default: 2 }, { perVariant: false });
    const replaced = await replaceSaleState(store, saleId, {
      meta: { ...metaOf(one, 4), epoch: "2" },
      remaining: 6,
      holdings: {},
      ledger: {},
      settled: [],
      recordedAdjustments: [],
    });
    expect(replaced.kind === "rebuilt" && replaced.kept.map((o) => o.orderId)).toEqual([queued.orderId]);
    const k = saleKeys(saleId);
    expect(await redis.get(k.stock)).toBe("4");
    expect(await redis.hgetall(k.holdings)).toEqual({ ed: "2" });
    expect(await redis.exists(k.variantStock, k.variantHoldings)).toBe(0);
  });
});

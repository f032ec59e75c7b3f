import { describe, expect, it } from "vitest";
import { saleKeys } from "../../../src/stock/keys";
import { appForFile } from "../../support/app-per-file";
import { failAdjustmentWrites as refuseAdjustmentWrites } from "../../support/db-faults";
import { ADMIN_TOKEN } from "../../support/shopper";

const app = appForFile({ vars: { RECOVERY_QUIET_SECONDS: "1", OUTBOX_GRACE_SECONDS: "1" } });

const code = (body: Record<string, unknown>) => (body.error as { code?: string } | undefined)?.code;

function adjust(saleId: string, delta: number, key?: string) {
  return app.api.call("POST", `/api/admin/sales/${saleId}/stock`, {
    token: ADMIN_TOKEN,
    body: { delta },
    headers: key === undefined ? {} : { "Idempotency-Key": key },
  });
}

/** Stock (initial + adjustments) and remaining as each store holds them. */
async function figures(saleId: string) {
  const keys = saleKeys(saleId);
  const { rows } = await app.db.query<{ total: number; recorded: number }>(
    `select s.initial_stock + s.stock_adjustments as total,
            (select coalesce(sum(delta), 0) from stock_adjustments a where a.sale_id = s.id)::int as recorded
     from sales s where id = $1`,
    [saleId],
  );
  return {
    redisStock: Number(await app.redis.hget(keys.meta, "stock")),
    redisRemaining: Number(await app.redis.get(keys.stock)),
    dbStock: Number(rows[0]?.total),
    dbInitialPlusRecorded: 5 + Number(rows[0]?.recorded),
  };
}

const failAdjustmentWrites = (on: boolean) => refuseAdjustmentWrites(app.db, on);

async function rebuild(saleId: string) {
  const res = await app.api.admin("POST", `/sales/${saleId}/rebuild`);
  expect(res.status).toBe(200);
}

describe("operator stock adjustments across store failures", () => {
  it("a keyed adjustment refused while Postgres is down is applied exactly once when retried", async () => {
    const sale = await app.api.createSale({ stock: 5 });
    await app.stack.postgres.stop();
    try {
      const first = await adjust(sale.saleId, 3, "restock-1");
      expect(first.status).toBe(503);
    } finally {
      await app.stack.postgres.start();
    }
    const retry = await adjust(sale.saleId, 3, "restock-1");
    expect(retry.status).toBe(200);
    expect(retry.body).toMatchObject({ stock: 8, remaining: 8 });
    const again = await adjust(sale.saleId, 3, "restock-1");
    expect(again.body).toMatchObject({ stock: 8, remaining: 8 });
    expect(await figures(sale.saleId)).toEqual({
      redisStock: 8,
      redisRemaining: 8,
      dbStock: 8,
      dbInitialPlusRecorded: 8,
    });
    await rebuild(sale.saleId);
    expect(await figures(sale.saleId)).toMatchObject({ redisStock: 8, redisRemaining: 8, dbStock: 8 });
  });

  it("a keyed adjustment that failed between Redis and Postgres is completed, not repeated, by its retry", async () => {
    const sale = await app.api.createSale({ stock: 5 });
    await failAdjustmentWrites(true);
    try {
      expect((await adjust(sale.saleId, -2, "shrink-1")).status).toBe(503);
    } finally {
      await failAdjustmentWrites(false);
    }
    const retry = await adjust(sale.saleId, -2, "shrink-1");
    expect(retry.status).toBe(200);
    expect(retry.body).toMatchObject({ stock: 3, remaining: 3 });
    expect(await figures(sale.saleId)).toEqual({
      redisStock: 3,
      redisRemaining: 3,
      dbStock: 3,
      dbInitialPlusRecorded: 3,
    });
    await rebuild(sale.saleId);
    expect(await figures(sale.saleId)).toMatchObject({ redisStock: 3, redisRemaining: 3, dbStock: 3 });
  });

  it("the same key with another delta is refused, in either store's state", async () => {
    const sale = await app.api.createSale({ stock: 5 });
    expect((await adjust(sale.saleId, 2, "k")).status).toBe(200);
    const reused = await adjust(sale.saleId, 4, "k");
    expect(reused.status).toBe(409);
    expect(code(reused.body)).toBe("CONFLICT");
    expect(String((reused.body.error as { message: string }).message)).toMatch(/Idempotency-Key/);
    // the same key on another sale is another adjustment
    const other = await app.api.createSale({ stock: 5 });
    expect((await adjust(other.saleId, 4, "k")).body).toMatchObject({ stock: 9 });
    expect((await figures(sale.saleId)).dbStock).toBe(7);
    const bad = await adjust(sale.saleId, 1, "x".repeat(129));
    expect([bad.status, code(bad.body)]).toEqual([400, "INVALID_REQUEST"]);
  });

  it("an unkeyed adjustment half done (Redis only) is recorded in Postgres by the reconciliation", async () => {
    const sale = await app.api.createSale({ stock: 5 });
    await failAdjustmentWrites(true);
    try {
      const refused = await adjust(sale.saleId, 4);
      expect(refused.status).toBe(503);
      // without a key the answer cannot say "nothing changed": Redis may have applied it
      expect(String((refused.body.error as { message: string }).message)).toMatch(
        /may have been applied.*Idempotency-Key/,
      );
    } finally {
      await failAdjustmentWrites(false);
    }
    const report = await app.api.admin("POST", `/sales/${sale.saleId}/reconcile`);
    expect(report.status).toBe(200);
    expect(await figures(sale.saleId)).toEqual({
      redisStock: 9,
      redisRemaining: 9,
      dbStock: 9,
      dbInitialPlusRecorded: 9,
    });
    await rebuild(sale.saleId);
    expect(await figures(sale.saleId)).toMatchObject({ redisStock: 9, redisRemaining: 9, dbStock: 9 });
  });

  it("a rebuild between the two halves keeps the Redis half and records it once; a retry changes nothing", async () => {
    const sale = await app.api.createSale({ stock: 5 });
    await failAdjustmentWrites(true);
    try {
      expect((await adjust(sale.saleId, 3, "mid-rebuild")).status).toBe(503);
    } finally {
      await failAdjustmentWrites(false);
    }
    // a rebuild has moved the sale to its next epoch in Postgres and not yet replaced the Redis state
    await app.db.query("update sales set epoch = epoch + 1 where id = $1", [sale.saleId]);
    const during = await adjust(sale.saleId, 3, "mid-rebuild");
    expect([during.status, code(during.body)]).toEqual([503, "UNAVAILABLE"]);
    expect((await app.api.admin("POST", `/sales/${sale.saleId}/reconcile`)).body).toMatchObject({
      recordedAdjustments: [],
    });
    expect((await figures(sale.saleId)).dbStock).toBe(5);
    await rebuild(sale.saleId);
    expect(await figures(sale.saleId)).toEqual({
      redisStock: 8,
      redisRemaining: 8,
      dbStock: 8,
      dbInitialPlusRecorded: 8,
    });
    const retry = await adjust(sale.saleId, 3, "mid-rebuild");
    expect(retry.body).toMatchObject({ stock: 8, remaining: 8 });
    expect(await figures(sale.saleId)).toEqual({
      redisStock: 8,
      redisRemaining: 8,
      dbStock: 8,
      dbInitialPlusRecorded: 8,
    });
  });
});

/** Waits out the rebuilt sale's quiet period (RECOVERY_QUIET_SECONDS is 1 here). */
async function quiet(saleId: string) {
  const until = Number(await app.redis.hget(saleKeys(saleId).meta, "recoveringUntil"));
  await new Promise((r) => setTimeout(r, Math.max(0, until - Date.now()) + 300));
}

/** An adjustment sent without a key while Postgres refuses adjustment writes (Redis applies it first). */
async function halfDoneUnkeyed(saleId: string, delta: number) {
  await failAdjustmentWrites(true);
  try {
    const refused = await adjust(saleId, delta);
    expect([refused.status, code(refused.body)]).toEqual([503, "UNAVAILABLE"]);
    return refused;
  } finally {
    await failAdjustmentWrites(false);
  }
}

describe("an adjustment sent without an Idempotency-Key", () => {
  it("answered 503 after Redis removed 3 units: a rebuild keeps the removal, and those units are not sold again", async () => {
    const sale = await app.api.createSale({ stock: 5, perUserLimit: 1 });
    await halfDoneUnkeyed(sale.saleId, -3);
    await rebuild(sale.saleId);
    expect(await figures(sale.saleId)).toEqual({
      redisStock: 2,
      redisRemaining: 2,
      dbStock: 2,
      dbInitialPlusRecorded: 2,
    });
    await quiet(sale.saleId);
    const buys = await Promise.all(
      Array.from({ length: 5 }, (_, i) => app.api.buy(sale.productToken, `unkeyed-minus-${i}`, 1)),
    );
    expect(buys.filter((r) => r.status === 202)).toHaveLength(2);
    await app.drain();
    expect((await app.api.stats(sale.saleId)).body).toMatchObject({
      stock: 2,
      remaining: 0,
      invariantHolds: true,
    });
  });

  it("answered 503 after Redis added 3 units that were then sold: a rebuild keeps them, remaining never goes below zero", async () => {
    const sale = await app.api.createSale({ stock: 5, perUserLimit: 2 });
    await halfDoneUnkeyed(sale.saleId, 3);
    const buys = await Promise.all(
      Array.from({ length: 4 }, (_, i) => app.api.buy(sale.productToken, `unkeyed-plus-${i}`, 2)),
    );
    expect(buys.map((r) => r.status)).toEqual([202, 202, 202, 202]);
    await app.drain();
    await rebuild(sale.saleId);
    expect(await figures(sale.saleId)).toEqual({
      redisStock: 8,
      redisRemaining: 0,
      dbStock: 8,
      dbInitialPlusRecorded: 8,
    });
    expect((await app.api.stats(sale.saleId)).body).toMatchObject({
      stock: 8,
      remaining: 0,
      invariantHolds: true,
    });
  });

  it("gets an Idempotency-Key made up and answered, and a retry with it applies the adjustment once", async () => {
    const sale = await app.api.createSale({ stock: 5 });
    const refused = await halfDoneUnkeyed(sale.saleId, 2);
    const key = refused.headers.get("Idempotency-Key");
    expect(key).toMatch(/^[0-9a-f-]{36}$/);
    expect(String((refused.body.error as { message: string }).message)).toContain(String(key));
    const retry = await adjust(sale.saleId, 2, String(key));
    expect([retry.status, retry.headers.get("Idempotency-Key")]).toEqual([200, key]);
    expect(retry.body).toMatchObject({ stock: 7, remaining: 7 });
    expect((await adjust(sale.saleId, 2, String(key))).body).toMatchObject({ stock: 7, remaining: 7 });
    const fresh = await adjust(sale.saleId, 1);
    expect(fresh.status).toBe(200);
    expect(fresh.headers.get("Idempotency-Key")).not.toBe(key);
    expect(await figures(sale.saleId)).toEqual({
      redisStock: 8,
      redisRemaining: 8,
      dbStock: 8,
      dbInitialPlusRecorded: 8,
    });
  });
});

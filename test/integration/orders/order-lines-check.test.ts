/**
 * The check on an order's lines (`order_items_valid`, the `orders_items_check` constraint) on a real
 * Postgres: drizzle/0017 rewrote it in PL/pgSQL for speed, and it must answer exactly as the SQL version of
 * drizzle/0013 did (true, false or null) for any lines, hostile ones included; and the constraint still
 * refuses an order whose lines do not add up.
 */
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrate } from "../../../local/migrate";
import { type PostgresProcess, startPostgres } from "../../../local/postgres-process";

let dir: string;
let postgres: PostgresProcess;
let client: pg.Client;

/** drizzle/0013's function, as it was written there, under another name. */
function firstVersion(): string {
  const text = readFileSync(join(import.meta.dirname, "../../../drizzle/0013_sale_variants.sql"), "utf8");
  const start = text.indexOf("CREATE FUNCTION order_items_valid(");
  const end = text.indexOf("$$;", start) + 3;
  return text.slice(start, end).replace("order_items_valid(", "order_items_valid_0013(");
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "flashsale-order-lines-"));
  postgres = await startPostgres({ port: 0, dir, durable: false });
  await migrate(postgres.databaseUrl);
  client = new pg.Client({ connectionString: postgres.databaseUrl });
  await client.connect();
  await client.query(firstVersion());
}, 60_000);

afterAll(async () => {
  await client?.end();
  await postgres?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const variantId = fc.constantFrom("default", "EU38", "EU39", "a", "A", "", "\u00e9", "e\u0301");
const number = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 1, max: 5 }) },
  fc.integer({ min: -3, max: 0 }),
  fc.constantFrom(0.5, 1.5, 1e20, -0, 2 ** 53, 999999999999),
);
/** A line as a client might send it, well-formed or not. */
const line = fc.oneof(
  { weight: 6, arbitrary: fc.record({ variantId, quantity: number, priceCents: number }) },
  fc.record({ variantId, quantity: number }),
  fc.record({ variantId: fc.oneof(fc.integer(), fc.constant(null)), quantity: number, priceCents: number }),
  fc.record({ variantId, quantity: fc.constantFrom("1", true, null), priceCents: number }),
  fc.constantFrom(1, "x", null, [], [1]),
);
const lines = fc.oneof(
  { weight: 8, arbitrary: fc.array(line, { minLength: 0, maxLength: 4 }) },
  fc.array(fc.record({ variantId: fc.uuid(), quantity: fc.constant(1), priceCents: fc.constant(1) }), {
    minLength: 49,
    maxLength: 52,
  }),
  fc.constantFrom(null, {}, "lines", 3),
);
/** The lines with the order's quantity and amount: often their true totals, sometimes not, sometimes null. */
const order = lines.chain((items) => {
  const list = Array.isArray(items) ? (items as { quantity?: unknown; priceCents?: unknown }[]) : [];
  const sum = (f: (l: { quantity?: unknown; priceCents?: unknown }) => number) =>
    list.reduce((s, l) => s + (l && typeof l === "object" ? f(l) : 0), 0);
  const quantity = sum((l) => Number(l.quantity) || 0);
  const amount = sum((l) => (Number(l.quantity) || 0) * (Number(l.priceCents) || 0));
  const int32 = (v: number) => (Number.isSafeInteger(v) && Math.abs(v) < 2 ** 31 ? v : 1);
  const int64 = (v: number) => (Number.isSafeInteger(v) ? v : 1);
  return fc.record({
    items: fc.constant(items),
    quantity: fc.oneof(
      { weight: 4, arbitrary: fc.constant(int32(quantity)) },
      fc.integer(),
      fc.constant(null),
    ),
    amount: fc.oneof({ weight: 4, arbitrary: fc.constant(int64(amount)) }, fc.integer(), fc.constant(null)),
  });
});

/** Lines whose answer turns on one rule each, as JSON text (some numbers JavaScript cannot hold), and the answer. */
const EDGES: [items: string, quantity: number, amount: string, answer: boolean | null][] = [
  // fractional quantities adding up to whole totals
  [
    '[{"variantId":"a","quantity":1.5,"priceCents":2},{"variantId":"b","quantity":1.5,"priceCents":2}]',
    3,
    "6",
    false,
  ],
  // fractional prices adding up to a whole amount
  [
    '[{"variantId":"a","quantity":1,"priceCents":1.5},{"variantId":"b","quantity":1,"priceCents":0.5}]',
    2,
    "2",
    false,
  ],
  // a price past 2^53: exact arithmetic, not float
  ['[{"variantId":"a","quantity":1,"priceCents":9007199254740993}]', 1, "9007199254740992", false],
  ['[{"variantId":"a","quantity":1,"priceCents":9007199254740993}]', 1, "9007199254740993", true],
  // ids that differ by case, or by Unicode normalisation, are two variants
  [
    '[{"variantId":"A","quantity":1,"priceCents":1},{"variantId":"a","quantity":1,"priceCents":1}]',
    2,
    "2",
    true,
  ],
  [
    '[{"variantId":"\u00e9","quantity":1,"priceCents":1},{"variantId":"e\u0301","quantity":1,"priceCents":1}]',
    2,
    "2",
    true,
  ],
  [
    '[{"variantId":"a","quantity":1,"priceCents":1},{"variantId":"a","quantity":1,"priceCents":1}]',
    2,
    "2",
    false,
  ],
  // exponent forms of whole numbers
  ['[{"variantId":"a","quantity":2e0,"priceCents":0.3e1}]', 2, "6", true],
  ['[{"variantId":"a","quantity":1,"priceCents":-0.0e5}]', 1, "0", true],
];

describe("an order's lines, checked by Postgres", () => {
  it("are checked by drizzle/0017's PL/pgSQL function", async () => {
    const { rows } = await client.query(
      "select l.lanname from pg_proc p join pg_language l on l.oid = p.prolang where p.proname = 'order_items_valid'",
    );
    expect(rows).toEqual([{ lanname: "plpgsql" }]);
  });

  it("are judged as drizzle/0013's function judged them on lines chosen for each rule", async () => {
    for (const [items, quantity, amount, answer] of EDGES) {
      const { rows } = await client.query(
        "select order_items_valid($1::jsonb, $2, $3::bigint) as now, order_items_valid_0013($1::jsonb, $2, $3::bigint) as was",
        [items, quantity, amount],
      );
      expect({ items, amount, ...rows[0] }).toEqual({ items, amount, now: answer, was: answer });
    }
  });

  it("are judged as drizzle/0013's SQL function judged them, for any lines", async () => {
    const cases = fc.sample(order, { numRuns: 3000, seed: 20261129 });
    const input = JSON.stringify(
      cases.map((c, i) => ({
        i,
        items: c.items === null ? null : c.items,
        quantity: c.quantity,
        amount: c.amount,
      })),
    );
    const { rows } = await client.query<{ i: number; now: boolean | null; was: boolean | null }>(
      `select x.i, order_items_valid(x.items, x.quantity, x.amount) as now,
              order_items_valid_0013(x.items, x.quantity, x.amount) as was
       from jsonb_to_recordset($1::jsonb) as x(i int, items jsonb, quantity int, amount bigint)`,
      [input],
    );
    const differ = rows
      .filter((r) => r.now !== r.was)
      .map((r) => ({ ...cases[r.i], now: r.now, was: r.was }));
    expect(differ).toEqual([]);
    // the sample reached every answer
    expect(new Set(rows.map((r) => r.now))).toEqual(new Set([true, false, null]));
    expect(rows.filter((r) => r.now === true).length).toBeGreaterThan(100);
  });

  it("the constraint refuses an order whose lines do not add up, and takes one whose lines do", async () => {
    const sale = `insert into sales (id, product_id, name, price_cents, initial_stock, per_user_limit, starts_at,
      ends_at, payment_window_seconds, product_token) values ('s-lines', 'p', 'lines', 100, 10, 2, now(),
      now() + interval '1 hour', 600, 'tok-lines')`;
    await client.query(sale);
    await client.query(`insert into sale_variants (sale_id, variant_id, position, name, price_cents, initial_stock)
      values ('s-lines', 'A', 0, 'A', 100, 5), ('s-lines', 'B', 1, 'B', 250, 5)`);
    const insert = (id: string, items: unknown, quantity: number, amount: number) =>
      client.query(
        `insert into orders (id, sale_id, user_id, quantity, status, created_at, expires_at, epoch, items, amount_cents)
         values ($1, 's-lines', 'u', $2, 'awaiting_payment', now(), now() + interval '10 minutes', 1, $3, $4)`,
        [id, quantity, JSON.stringify(items), amount],
      );
    const two = [
      { variantId: "A", quantity: 1, priceCents: 100 },
      { variantId: "B", quantity: 2, priceCents: 250 },
    ];
    await expect(insert("s-lines-1", two, 3, 600)).resolves.toBeDefined();
    for (const [items, quantity, amount] of [
      [two, 3, 599],
      [two, 2, 600],
      [[two[0], { ...two[0], quantity: 2 }], 3, 300],
      [
        [
          { ...two[0], quantity: 1.5 },
          { ...two[1], quantity: 1.5, priceCents: 100 },
        ],
        3,
        300,
      ],
      [[], 0, 0],
    ] as const)
      await expect(insert(`s-lines-${Math.random()}`, items, quantity as number, amount)).rejects.toThrow(
        /orders_items_check/,
      );
    const { rows } = await client.query("select count(*)::int as n from orders where sale_id = 's-lines'");
    expect(rows[0]?.n).toBe(1);
  });
});

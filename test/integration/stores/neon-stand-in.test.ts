/**
 * The local Neon SQL-over-HTTP endpoint driven by the real `@neondatabase/serverless` `neon()` and
 * drizzle `neon-http`, in front of a real (embedded) Postgres: parameters, type round trips, batches as
 * transactions, SQLSTATE codes on errors, the pinned target, and an outage answered quickly.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { NeonDbError, type NeonQueryFunction, neon, neonConfig } from "@neondatabase/serverless";
import { eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/neon-http";
import { integer, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type NeonHttpServer, startNeonHttpServer } from "../../../local/neon-http-server";
import { type PostgresProcess, startPostgres } from "../../../local/postgres-process";

const items = pgTable("items", { id: integer("id").primaryKey(), name: text("name").notNull() }, (t) => [
  uniqueIndex("items_name_unique").on(t.name),
]);

let dir: string;
let postgres: PostgresProcess;
let endpoint: NeonHttpServer;
let sql: NeonQueryFunction<false, false>;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "flashsale-neon-test-"));
  postgres = await startPostgres({ port: 0, dir, durable: false });
  endpoint = await startNeonHttpServer({ port: 0, databaseUrl: postgres.databaseUrl });
  neonConfig.fetchEndpoint = () => endpoint.url;
  sql = neon(postgres.databaseUrl);
  await sql`CREATE TABLE items (id integer PRIMARY KEY, name text NOT NULL)`;
  await sql`CREATE UNIQUE INDEX items_name_unique ON items (name)`;
}, 60_000);

afterAll(async () => {
  await endpoint?.close();
  await postgres?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("local Neon HTTP endpoint", () => {
  it("runs parameterised queries and reports full results", async () => {
    expect(await sql`SELECT ${2}::int + ${3}::int AS sum, ${"x"}::text AS t`).toEqual([{ sum: 5, t: "x" }]);
    expect(await sql.query("SELECT $1::text || $2::text AS s", ["a", "b"])).toEqual([{ s: "ab" }]);
    const full = await sql.query("SELECT generate_series(1, 3) AS n", [], {
      fullResults: true,
      arrayMode: true,
    });
    expect(full.command).toBe("SELECT");
    expect(full.rowCount).toBe(3);
    expect(full.fields[0]).toMatchObject({ name: "n", dataTypeID: 23 });
    expect(full.rows).toEqual([[1], [2], [3]]);
  });

  it("answers arrayMode with rows as arrays, as Neon does, through the driver", async () => {
    const arrays = neon(postgres.databaseUrl, { arrayMode: true });
    expect(await arrays`SELECT 1 AS a, ${"x"}::text AS a`).toEqual([[1, "x"]]);
    expect(await sql.query("SELECT 1 AS a, 2 AS a", [], { arrayMode: true })).toEqual([[1, 2]]);
    expect(await sql.query("SELECT 1 AS a, 2 AS a")).toEqual([{ a: 2 }]);
    const full = await arrays.query("SELECT n FROM generate_series(1, 2) AS n", [], { fullResults: true });
    expect([full.rowAsArray, full.rows, full.fields.map((f) => f.name)]).toEqual([true, [[1], [2]], ["n"]]);
    const mixed = [sql`SELECT 1 AS n`, sql.query("SELECT 2 AS n", [], { arrayMode: true })];
    const [objects, rows] = await sql.transaction(mixed as never[]);
    expect([objects, rows]).toEqual([[{ n: 1 }], [[2]]]);
  });

  it("lets a query's own arrayMode win over the Neon-Array-Mode header, as Neon's proxy does", async () => {
    const post = async (body: unknown, headers: Record<string, string> = {}) => {
      const res = await fetch(endpoint.url, {
        method: "POST",
        headers: {
          "neon-connection-string": postgres.databaseUrl,
          "neon-raw-text-output": "true",
          ...headers,
        },
        body: JSON.stringify(body),
      });
      return [res.status, await res.json()];
    };
    const query = "SELECT 1 AS a, NULL::text AS b";
    expect(await post({ query, params: [] }, { "neon-array-mode": "true" })).toEqual([
      200,
      expect.objectContaining({ rows: [["1", null]], rowAsArray: true, rowCount: 1, command: "SELECT" }),
    ]);
    expect(await post({ query, params: [], arrayMode: false }, { "neon-array-mode": "true" })).toEqual([
      200,
      expect.objectContaining({ rows: [{ a: "1", b: null }], rowAsArray: false }),
    ]);
    const batch = await post({
      queries: [
        { query, params: [], arrayMode: true },
        { query, params: [] },
      ],
    });
    expect(batch).toEqual([
      200,
      {
        results: [
          expect.objectContaining({ rows: [["1", null]], rowAsArray: true }),
          expect.objectContaining({ rows: [{ a: "1", b: null }], rowAsArray: false }),
        ],
      },
    ]);
    const [, single] = (await post({ query, params: [] })) as [number, { fields: unknown }];
    expect(single.fields).toEqual([
      expect.objectContaining({ name: "a", dataTypeID: 23, format: "text" }),
      expect.objectContaining({ name: "b", dataTypeID: 25, format: "text" }),
    ]);
  });

  it("refuses what it does not implement: typed JSON output (501), other methods (405)", async () => {
    const typed = await fetch(endpoint.url, {
      method: "POST",
      headers: { "neon-connection-string": postgres.databaseUrl },
      body: JSON.stringify({ query: "SELECT 1 AS one", params: [] }),
    });
    expect([typed.status, await typed.json()]).toEqual([
      501,
      { message: expect.stringMatching(/Neon-Raw-Text-Output/) },
    ]);
    expect((await fetch(endpoint.url)).status).toBe(405);
  });

  it("sends values as Postgres text so the driver parses the types", async () => {
    const when = new Date("2030-01-02T03:04:05.678Z");
    const [row] = await sql`
      SELECT 42::int AS i, 9007199254740993::bigint AS big, ${when}::timestamptz AS at,
             ${JSON.stringify({ a: [1, "b"] })}::jsonb AS doc, true AS yes, NULL::text AS nothing,
             ${["x", "y z", 'q"uote']}::text[] AS tags, 12.50::numeric AS price`;
    expect(row).toEqual({
      i: 42,
      big: "9007199254740993",
      at: when,
      doc: { a: [1, "b"] },
      yes: true,
      nothing: null,
      tags: ["x", "y z", 'q"uote'],
      price: "12.50",
    });
  });

  it("runs a batch in one transaction and rolls it back on error", async () => {
    const [, count] = await sql.transaction([
      sql`INSERT INTO items (id, name) VALUES (1, 'one'), (2, 'two')`,
      sql`SELECT count(*)::int AS n FROM items`,
    ]);
    expect(count).toEqual([{ n: 2 }]);
    const failed = await sql
      .transaction([sql`INSERT INTO items (id, name) VALUES (3, 'three')`, sql`SELECT 1 / 0`])
      .catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(NeonDbError);
    expect((failed as NeonDbError).code).toBe("22012");
    expect(await sql`SELECT id FROM items WHERE id = 3`).toEqual([]);
    const [[mode]] = (await sql.transaction(
      [
        sql`SELECT current_setting('transaction_isolation') AS iso, current_setting('transaction_read_only') AS ro`,
      ],
      { isolationLevel: "Serializable", readOnly: true },
    )) as [[{ iso: string; ro: string }]];
    expect(mode).toEqual({ iso: "serializable", ro: "on" });
  });

  it("surfaces Postgres errors as NeonDbError with the SQLSTATE and details", async () => {
    const duplicate = await sql`INSERT INTO items (id, name) VALUES (10, 'one')`.catch((e: unknown) => e);
    expect(duplicate).toBeInstanceOf(NeonDbError);
    expect(duplicate).toMatchObject({ code: "23505", constraint: "items_name_unique", table: "items" });
    const multi = await sql.query("SELECT 1; SELECT 2").catch((e: unknown) => e);
    expect(multi).toMatchObject({ code: "42601" });
  });

  it("serves drizzle neon-http queries and batches", async () => {
    const db = drizzle({ client: sql });
    await db.insert(items).values({ id: 20, name: "drizzle" });
    expect(await db.select().from(items).where(eq(items.id, 20))).toEqual([{ id: 20, name: "drizzle" }]);
    const [inserted, rows] = await db.batch([
      db.insert(items).values({ id: 21, name: "batched" }).returning({ id: items.id }),
      db.select({ name: items.name }).from(items).where(eq(items.id, 21)),
    ]);
    expect(inserted).toEqual([{ id: 21 }]);
    expect(rows).toEqual([{ name: "batched" }]);
    const failed = await db
      .batch([
        db.insert(items).values({ id: 22, name: "lost" }),
        db.insert(items).values({ id: 23, name: "drizzle" }),
      ])
      .catch((e: unknown) => e);
    expect(failed).toMatchObject({ code: "23505" });
    expect(await db.select().from(items).where(eq(items.id, 22))).toEqual([]);
  });

  it("only ever connects to its configured Postgres", async () => {
    const elsewhere = neon(postgres.databaseUrl.replace("127.0.0.1", "db.elsewhere.invalid"));
    expect(await elsewhere`SELECT current_database() AS db`).toEqual([{ db: "flashsale" }]);
    const wrongPassword = neon(postgres.databaseUrl.replace(":postgres@", ":wrong@"));
    await expect(wrongPassword`SELECT 1`).rejects.toMatchObject({ code: "28P01" });
  });

  it("cancels the query of a client that goes away", async () => {
    const abort = new AbortController();
    const sleeping = fetch(endpoint.url, {
      method: "POST",
      headers: { "neon-connection-string": postgres.databaseUrl, "neon-raw-text-output": "true" },
      body: JSON.stringify({ query: "SELECT pg_sleep(30) AS abandoned", params: [] }),
      signal: abort.signal,
    }).catch(() => null);
    const running = () =>
      sql`SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE state = 'active' AND query LIKE 'SELECT pg_sleep(30) AS abandoned%'`;
    await expect.poll(running).toEqual([{ n: 1 }]);
    abort.abort();
    await sleeping;
    await expect.poll(running, { timeout: 5_000 }).toEqual([{ n: 0 }]);
  }, 15_000);

  it("never lets a later query run inside a transaction a lone BEGIN left open", async () => {
    const direct = new pg.Client({ connectionString: postgres.databaseUrl });
    await direct.connect();
    try {
      await sql`BEGIN`;
      for (let id = 60; id < 65; id++)
        await sql`INSERT INTO items (id, name) VALUES (${id}, ${`after-begin-${id}`})`;
      const seen = await direct.query("SELECT count(*)::int AS n FROM items WHERE name LIKE 'after-begin-%'");
      expect(seen.rows, "the inserts were committed, not held in the open transaction").toEqual([{ n: 5 }]);
      await expect
        .poll(async () => {
          const open = await direct.query(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE state LIKE 'idle in transaction%'",
          );
          return open.rows;
        })
        .toEqual([{ n: 0 }]);
    } finally {
      await direct.end();
    }
  });

  it("answers a wrong parameter count with Postgres' 08P01 as a 400, not 503", async () => {
    const failed = await sql.query("SELECT $1::int + $2::int AS s", [1]).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(NeonDbError);
    expect(failed).toMatchObject({ code: "08P01" });
    expect(await sql`SELECT 1 AS ok`).toEqual([{ ok: 1 }]);
  });

  it("queues a burst bigger than its pool instead of failing it", async () => {
    const burst = await Promise.allSettled(Array.from({ length: 60 }, () => sql`SELECT pg_sleep(0.5)`));
    expect(burst.filter((r) => r.status === "rejected")).toEqual([]);
  }, 30_000);

  it("reports rowCount null for commands whose tag has no count", async () => {
    const run = (query: string) => sql.query(query, [], { fullResults: true });
    expect((await run("CREATE TABLE row_count_probe (a int)")).rowCount).toBeNull();
    expect((await run("SET application_name = 'probe'")).rowCount).toBeNull();
    expect((await run("SHOW application_name")).rowCount).toBeNull();
    expect((await run("INSERT INTO row_count_probe VALUES (1), (2)")).rowCount).toBe(2);
  });

  it("answers 503 quickly while Postgres is stopped, and recovers after a start", async () => {
    await postgres.stop();
    const started = Date.now();
    await expect(sql`SELECT 1`).rejects.toThrow(/HTTP status 503/);
    expect(Date.now() - started).toBeLessThan(3_000);
    await postgres.start();
    expect(await sql`SELECT count(*)::int AS n FROM items WHERE id = 1`).toEqual([{ n: 1 }]);
  }, 30_000);
});

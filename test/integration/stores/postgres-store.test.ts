/**
 * The same SqlStore assertions against both adapters over one real (embedded) Postgres: Neon's HTTP
 * driver through the local Neon endpoint, and the pooled TCP adapter. Equal expectations mean equal
 * row shapes; then transactions, `withDb`'s classification of what fails, and a stopped server.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq, sql } from "drizzle-orm";
import { integer, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type NeonHttpServer, startNeonHttpServer } from "../../../local/neon-http-server";
import { freePort } from "../../../local/ports";
import { type PostgresProcess, startPostgres } from "../../../local/postgres-process";
import { withDb } from "../../../src/db/client";
import type { SqlStore } from "../../../src/db/sql-store";
import { DatabaseRefusedError, StoreUnavailableError } from "../../../src/errors";
import { toApiError } from "../../../src/http/api-error";
import { connectPostgresHttp } from "../../../src/stores/postgres-http";
import { connectPostgresTcp, type PostgresTcpStore } from "../../../src/stores/postgres-tcp";

let dir: string;
let postgres: PostgresProcess;
let endpoint: NeonHttpServer;
let tcp: PostgresTcpStore;
const stores: Record<string, SqlStore> = {};

const items = (name: string) =>
  pgTable(`items_${name}`, {
    id: integer("id").primaryKey(),
    name: text("name").notNull(),
    at: timestamp("at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "flashsale-sqlstore-test-"));
  postgres = await startPostgres({ port: 0, dir, durable: false });
  endpoint = await startNeonHttpServer({ port: 0, databaseUrl: postgres.databaseUrl });
  stores.http = connectPostgresHttp(postgres.databaseUrl, { endpoint: endpoint.url });
  tcp = connectPostgresTcp(postgres.databaseUrl);
  stores.tcp = tcp;
}, 60_000);

afterAll(async () => {
  await tcp?.close();
  await endpoint?.close();
  await postgres?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe.each(["http", "tcp"])("SqlStore over %s", (name) => {
  const db = () => stores[name] as SqlStore;
  const table = items(name);
  const tableName = sql.raw(`items_${name}`);

  beforeAll(async () => {
    await db().execute(
      sql`create table ${tableName} (id integer primary key, name text not null unique,
          at timestamptz not null default now())`,
    );
  });

  it("answers execute with { rows }, parsed the same way", async () => {
    const when = new Date("2030-01-02T03:04:05.678Z");
    const { rows } = await db().execute(sql`
      select 42::int as i, 9007199254740993::bigint as big, ${when.toISOString()}::timestamptz as at,
             ${JSON.stringify({ a: [1, "b"] })}::jsonb as doc, true as yes, null::text as nothing,
             array['x', 'y z']::text[] as tags, 12.50::numeric as price, ${"o'q"}::text as t`);
    expect(rows).toEqual([
      {
        i: 42,
        big: "9007199254740993",
        at: "2030-01-02 03:04:05.678+00",
        doc: { a: [1, "b"] },
        yes: true,
        nothing: null,
        tags: ["x", "y z"],
        price: "12.50",
        t: "o'q",
      },
    ]);
    const inserted = await db().execute<{ id: number }>(
      sql`insert into ${tableName} (id, name) values (${1}, ${"one"}) returning id`,
    );
    expect(inserted.rows).toEqual([{ id: 1 }]);
  });

  it("runs drizzle's query builder", async () => {
    await db().insert(table).values({ id: 2, name: "two" });
    const [row] = await db().select().from(table).where(eq(table.id, 2));
    expect(row).toMatchObject({ id: 2, name: "two" });
    expect(row?.at).toBeInstanceOf(Date);
    await db().update(table).set({ name: "deux" }).where(eq(table.id, 2));
    expect(await db().select({ name: table.name }).from(table).where(eq(table.id, 2))).toEqual([
      { name: "deux" },
    ]);
  });

  it("runs a transaction's statements in order, answering each one's rows", async () => {
    const [first, second, count] = await db().transaction([
      sql`insert into ${tableName} (id, name, at) values (10, 'ten', ${"2030-01-02T03:04:05Z"}) returning id, at`,
      sql`update ${tableName} set name = 'dix' where id = 10`,
      sql`select count(*)::int as n from ${tableName} where id >= 10`,
    ]);
    expect(first).toEqual([{ id: 10, at: "2030-01-02 03:04:05+00" }]);
    expect(second).toEqual([]);
    expect(count).toEqual([{ n: 1 }]);
  });

  it("applies nothing of a transaction in which a statement fails; 23xxx is a 409 CONFLICT", async () => {
    const failed = await withDb(() =>
      db().transaction([
        sql`insert into ${tableName} (id, name) values (20, 'twenty')`,
        sql`insert into ${tableName} (id, name) values (21, 'one')`,
      ]),
    ).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(DatabaseRefusedError);
    expect(toApiError(failed).code).toBe("CONFLICT");
    const { rows } = await db().execute(sql`select id from ${tableName} where id in (20, 21)`);
    expect(rows).toEqual([]);
  });

  it("classifies errors as withDb does: 22xxx is INVALID_REQUEST, others pass through", async () => {
    const range = await withDb(() => db().execute(sql`select 2147483647::int + 1 as n`)).catch(
      (e: unknown) => e,
    );
    expect(range).toBeInstanceOf(DatabaseRefusedError);
    expect(toApiError(range).code).toBe("INVALID_REQUEST");
    const syntax = await withDb(() => db().execute(sql`select nope from ${tableName}`)).catch(
      (e: unknown) => e,
    );
    expect(syntax).not.toBeInstanceOf(DatabaseRefusedError);
    expect(syntax).not.toBeInstanceOf(StoreUnavailableError);
    const dup = await withDb(() => db().insert(table).values({ id: 1, name: "again" })).catch(
      (e: unknown) => e,
    );
    expect(toApiError(dup).code).toBe("CONFLICT");
  });
});

describe("SqlStore while Postgres cannot be reached", () => {
  it("answers StoreUnavailableError for a refused connection, from both adapters", async () => {
    const closed = new URL(postgres.databaseUrl);
    closed.port = String(await freePort());
    const deadEndpoint = await startNeonHttpServer({ port: 0, databaseUrl: closed.toString() });
    const http = connectPostgresHttp(closed.toString(), { endpoint: deadEndpoint.url });
    const refused = connectPostgresTcp(closed.toString());
    try {
      for (const db of [http, refused]) {
        await expect(withDb(() => db.execute(sql`select 1`))).rejects.toBeInstanceOf(StoreUnavailableError);
        await expect(withDb(() => db.transaction([sql`select 1`]))).rejects.toBeInstanceOf(
          StoreUnavailableError,
        );
      }
      await expect(withDb(() => refused.select().from(items("tcp")))).rejects.toBeInstanceOf(
        StoreUnavailableError,
      );
    } finally {
      await refused.close();
      await deadEndpoint.close();
      connectPostgresHttp(postgres.databaseUrl, { endpoint: endpoint.url });
    }
  });

  it("fails a statement whose connection is cut inside a transaction, and the process goes on", async () => {
    // Postgres ends the connection in use (a restart, a failover): the checked-out client hears it
    // between two statements, where the pool does not listen. It must fail that call, 503, not end
    // the process with an uncaught error.
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown) => uncaught.push(error);
    process.prependListener("uncaughtException", onUncaught);
    try {
      for (let i = 0; i < 5; i++) {
        const cut = await withDb(() =>
          tcp.transaction([sql`select pg_terminate_backend(pg_backend_pid())`, sql`select 1`]),
        ).catch((e: unknown) => e);
        expect(cut).toBeInstanceOf(StoreUnavailableError);
      }
      await new Promise((r) => setTimeout(r, 200));
      expect(uncaught).toEqual([]);
      expect((await tcp.execute<{ n: number }>(sql`select 1::int as n`)).rows).toEqual([{ n: 1 }]);
    } finally {
      process.removeListener("uncaughtException", onUncaught);
    }
  });

  it("fails over TCP while the server is stopped, and recovers after it starts", async () => {
    await tcp.execute(sql`select 1`);
    await postgres.stop();
    try {
      await expect(withDb(() => tcp.execute(sql`select 1`))).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(withDb(() => tcp.transaction([sql`select 1`]))).rejects.toBeInstanceOf(
        StoreUnavailableError,
      );
    } finally {
      await postgres.start();
    }
    await expect
      .poll(
        () =>
          tcp.execute<{ n: number }>(sql`select 1::int as n`).then(
            (r) => r.rows,
            () => "down",
          ),
        {
          timeout: 10_000,
        },
      )
      .toEqual([{ n: 1 }]);
  }, 60_000);
});

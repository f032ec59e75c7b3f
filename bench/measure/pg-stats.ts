/**
 * What Postgres did for one database between two moments: statements from `pg_stat_statements` when
 * the server has it loaded (the bench enables it), and always the transaction and row counters of
 * `pg_stat_database`. The bench's own queries run as a role of their own (`flashsale_bench`), so the
 * statement counts leave them out; its transactions are counted and subtracted.
 */
import pg from "pg";

const ROLE = "flashsale_bench";

export type PgSnapshot = {
  statements: number | null;
  byStatement: Record<string, number>;
  xactCommit: number;
  xactRollback: number;
  tuplesWritten: number;
  /** The bench's own queries sent before this snapshot read pg_stat_database (each is a transaction). */
  own: number;
};

export type PgDelta = {
  /** null when pg_stat_statements is not available. */
  statements: number | null;
  topStatements: { query: string; calls: number }[];
  transactions: number;
  rollbacks: number;
  tuplesWritten: number;
};

export class PgStats {
  private client: pg.Client;
  private own = 0;
  private ownRole = false;
  statementsAvailable = false;

  constructor(private readonly databaseUrl: string) {
    this.client = new pg.Client({ connectionString: databaseUrl });
  }

  /** Enables pg_stat_statements in this database and connects as the bench's own reading role. */
  async open(): Promise<void> {
    const admin = this.client;
    await admin.connect();
    try {
      await admin.query("create extension if not exists pg_stat_statements");
      await admin.query("select 1 from pg_stat_statements limit 1");
      this.statementsAvailable = true;
    } catch {
      this.statementsAvailable = false;
    }
    try {
      await admin.query(`do $$ begin
          if not exists (select 1 from pg_roles where rolname = '${ROLE}') then
            create role ${ROLE} login password '${ROLE}';
          end if; end $$`);
      await admin.query(`grant pg_read_all_stats to ${ROLE}`);
      await admin.query(`grant select on all tables in schema public to ${ROLE}`);
      const url = new URL(this.databaseUrl);
      url.username = ROLE;
      url.password = ROLE;
      const reader = new pg.Client({ connectionString: url.toString() });
      await reader.connect();
      this.client = reader;
      this.ownRole = true;
      await admin.end();
    } catch {
      this.client = admin; // not a superuser: read as the given user (its statements then count too)
    }
  }

  /** SHOW of a setting (`fsync`, `synchronous_commit`, `shared_preload_libraries`, …). */
  async setting(name: string): Promise<string> {
    const rows = await this.query<{ v: string }>("select current_setting($1) as v", [name]);
    return rows[0]?.v ?? "";
  }

  async query<T extends pg.QueryResultRow>(text: string, params: unknown[] = []): Promise<T[]> {
    this.own++;
    return (await this.client.query<T>(text, params)).rows;
  }

  async snapshot(): Promise<PgSnapshot> {
    const own = this.own;
    const db = await this.query<{ c: string; r: string; w: string }>(
      `select xact_commit as c, xact_rollback as r, tup_inserted + tup_updated + tup_deleted as w
       from pg_stat_database where datname = current_database()`,
    );
    const byStatement: Record<string, number> = {};
    let statements: number | null = null;
    if (this.statementsAvailable) {
      const notOwn = this.ownRole
        ? "and userid <> (select oid from pg_roles where rolname = current_user)"
        : "";
      const rows = await this.query<{ query: string; calls: string }>(
        `select query, calls from pg_stat_statements
         where dbid = (select oid from pg_database where datname = current_database()) ${notOwn}`,
      );
      statements = 0;
      for (const row of rows) {
        const key = row.query.replace(/\s+/g, " ").slice(0, 160);
        byStatement[key] = (byStatement[key] ?? 0) + Number(row.calls);
        statements += Number(row.calls);
      }
    }
    const row = db[0] ?? { c: "0", r: "0", w: "0" };
    return {
      statements,
      byStatement,
      xactCommit: Number(row.c),
      xactRollback: Number(row.r),
      tuplesWritten: Number(row.w),
      own,
    };
  }

  static delta(before: PgSnapshot, after: PgSnapshot): PgDelta {
    const top = Object.entries(after.byStatement)
      .map(([query, calls]) => ({ query, calls: calls - (before.byStatement[query] ?? 0) }))
      .filter((s) => s.calls > 0)
      .sort((a, b) => b.calls - a.calls)
      .slice(0, 8);
    return {
      statements:
        after.statements === null || before.statements === null ? null : after.statements - before.statements,
      topStatements: top,
      transactions: after.xactCommit - before.xactCommit - (after.own - before.own),
      rollbacks: after.xactRollback - before.xactRollback,
      tuplesWritten: after.tuplesWritten - before.tuplesWritten,
    };
  }

  async close(): Promise<void> {
    await this.client.end();
  }
}

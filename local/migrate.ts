/**
 * Applies the drizzle migrations in `drizzle/` to DATABASE_URL (or the URL given), with node-postgres.
 * `npm run db:migrate` runs it; the local stack and the tests call {@link migrate}.
 */
import { join, resolve } from "node:path";
import { drizzle } from "drizzle-orm/node-postgres";
import { migrate as runMigrations } from "drizzle-orm/node-postgres/migrator";
import pg from "pg";

const migrationsFolder = join(resolve(import.meta.dirname, ".."), "drizzle");

export async function migrate(databaseUrl: string): Promise<void> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  try {
    await runMigrations(drizzle({ client: pool }), { migrationsFolder });
  } finally {
    await pool.end();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const url = process.env.DATABASE_URL ?? "postgres://postgres:postgres@127.0.0.1:5440/flashsale";
  migrate(url)
    .then(() => console.log(`migrations applied to ${url.replace(/:[^:@/]+@/, ":***@")}`))
    .catch((error: unknown) => {
      console.error(`db:migrate failed: ${error instanceof Error ? error.message : String(error)}`);
      process.exit(1);
    });
}

/**
 * `tsx chaos/check.ts`: the checker on its own, against a running stack (the dev stack, or one a test
 * left up). It reads Redis and Postgres directly and judges one sale, or every sale in the catalog,
 * optionally against a history written by `npm run chaos` (chaos/output/<scenario>.history.json).
 * Prints what it found and exits 1 on any violation.
 *
 * Environment: REDIS_URL (redis://…, the redis-server itself, not the REST stand-in), DATABASE_URL,
 * SALE_ID (optional: default every sale), HISTORY (optional: a history file; its saleId is used).
 *
 * @example
 * REDIS_URL=redis://127.0.0.1:6390 DATABASE_URL=postgres://postgres:postgres@127.0.0.1:5440/flashsale \
 *   npx tsx chaos/check.ts
 */
import { readFile } from "node:fs/promises";
import { Redis } from "ioredis";
import pg from "pg";
import { catalogKeys } from "../src/stock/keys";
import { checkSale, printCheck } from "./checker";
import type { Op } from "./history";

const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6390";
const databaseUrl = process.env.DATABASE_URL ?? "postgres://postgres:postgres@127.0.0.1:5440/flashsale";

const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
const db = new pg.Pool({ connectionString: databaseUrl, max: 4 });
let failed = false;
try {
  let ops: Op[] = [];
  let saleIds: string[];
  if (process.env.HISTORY) {
    const file = JSON.parse(await readFile(process.env.HISTORY, "utf8")) as { saleId: string; ops: Op[] };
    ops = file.ops;
    saleIds = [process.env.SALE_ID ?? file.saleId];
  } else if (process.env.SALE_ID) {
    saleIds = [process.env.SALE_ID];
  } else {
    saleIds = (await redis.smembers(catalogKeys.sales)).sort();
  }
  console.log(
    `checking ${saleIds.length} sale(s)${ops.length ? ` against ${ops.length} operations` : " (no history: state only)"}`,
  );
  for (const saleId of saleIds) {
    const result = await checkSale({ redis, db }, saleId, ops, { stateOnly: !process.env.HISTORY });
    printCheck(result);
    failed ||= !result.ok;
  }
} catch (error) {
  console.error(`check failed to run: ${(error as Error).message}`);
  failed = true;
} finally {
  redis.disconnect();
  await db.end();
}
process.exit(failed ? 1 : 0);

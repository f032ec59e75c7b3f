/**
 * The Debian packages the local stack and the tests need (redis-server; Chromium and a font for the
 * browser tests; wrk for the bench), installed when missing, the way `playwright install --with-deps` does: with apt-get as
 * root or through passwordless sudo, saying what it installs. Where it cannot install, it stops at once
 * with the one command to run.
 *
 * @example
 * await ensureSystemPackages(["redis-server"], { for: "npm run dev" });
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

/** A package this project may need, and how to tell it is there. */
export type SystemPackage = "redis-server" | "chromium" | "fonts-liberation" | "wrk" | "prometheus";

const present: Record<SystemPackage, () => boolean> = {
  "redis-server": () => existsSync(process.env.REDIS_SERVER_BIN ?? "/usr/bin/redis-server"),
  chromium: () => existsSync("/usr/bin/chromium"),
  "fonts-liberation": () => existsSync("/usr/share/fonts/truetype/liberation"),
  wrk: () => existsSync("/usr/bin/wrk"),
  prometheus: () => existsSync(process.env.PROMETHEUS_BIN ?? "/usr/bin/prometheus"),
};

/** Thrown when packages are missing and this process cannot install them. */
export class MissingSystemPackagesError extends Error {
  override name = "MissingSystemPackagesError";
  constructor(
    readonly packages: SystemPackage[],
    readonly command: string,
    why: string,
  ) {
    super(`missing ${packages.join(", ")} (${why}). Install with:\n  ${command}`);
  }
}

function succeeds(command: string, args: string[]): boolean {
  return spawnSync(command, args, { stdio: "ignore" }).status === 0;
}

/** How this process may run apt-get: directly (root), through `sudo -n`, or not at all. */
function aptRunner(): string[] | null {
  if (!succeeds("sh", ["-c", "command -v apt-get"])) return null;
  if (process.getuid?.() === 0) return [];
  return succeeds("sudo", ["-n", "true"]) ? ["sudo", "-n"] : null;
}

/**
 * Installs whichever of `packages` are missing (Debian or Ubuntu only) or throws
 * {@link MissingSystemPackagesError} with the command to run. A no-op when everything is there.
 */
export function ensureSystemPackages(packages: SystemPackage[], context: { for: string }): void {
  const missing = packages.filter((p) => !present[p]());
  if (missing.length === 0) return;
  const command = `sudo apt-get update && sudo apt-get install -y --no-install-recommends ${missing.join(" ")}`;
  const runner = aptRunner();
  if (!runner) {
    throw new MissingSystemPackagesError(
      missing,
      command,
      "no apt-get, or neither root nor passwordless sudo",
    );
  }
  console.log(`[${context.for}] installing ${missing.join(", ")} with apt-get (one-time set-up)`);
  const run = (args: string[]) => {
    const [bin, ...rest] = [...runner, "apt-get", ...args];
    execFileSync(bin as string, rest, {
      stdio: ["ignore", "inherit", "inherit"],
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    });
  };
  try {
    run(["update", "-qq"]);
    run(["install", "-y", "-qq", "--no-install-recommends", ...missing]);
  } catch (error) {
    throw new MissingSystemPackagesError(missing, command, `apt-get failed: ${(error as Error).message}`);
  }
  const still = missing.filter((p) => !present[p]());
  if (still.length > 0) throw new MissingSystemPackagesError(still, command, "still missing after apt-get");
}

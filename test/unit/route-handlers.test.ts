import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { JOB_ROUTES, JOBS_MOUNT, type Job, jobUrl } from "../../src/job-paths";

const root = resolve(import.meta.dirname, "../..");

/** The app without services: its routes are known from the routers alone. */
const app = createApp({
  services: () => {
    throw new Error("listing the routes needs no services");
  },
  defer: () => () => {},
  clientIp: () => undefined,
});

/**
 * Every route of the app with the function that answers it: the last handler registered for its method
 * and path (the ones before it are the route's middleware and its validator; `app.use` is `ALL`).
 */
function routeHandlers(): Map<string, string> {
  const last = new Map<string, string>();
  for (const r of app.routes) if (r.method !== "ALL") last.set(`${r.method} ${r.path}`, r.handler.name);
  return last;
}

describe("route handlers", () => {
  it("are named functions, one name per route, so a stack trace names its route", () => {
    const handlers = routeHandlers();
    expect(handlers.size).toBeGreaterThan(40);
    const anonymous = [...handlers].filter(([, name]) => name === "" || name === "anonymous");
    expect(anonymous).toEqual([]);
    const names = [...handlers.values()];
    expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([]);
  });

  it("mount every job the publishers hand QStash, at the URL they publish to", () => {
    const handlers = routeHandlers();
    const published = (Object.keys(JOB_ROUTES) as Job[]).map((job) => `POST ${jobUrl("", job)}`);
    expect(published.filter((route) => !handlers.has(route))).toEqual([]);
    const mounted = [...handlers.keys()].filter((r) => r.startsWith(`POST ${JOBS_MOUNT}/`));
    expect(mounted.sort()).toEqual(published.sort());
  });

  it("are where ARCHITECTURE.md's route table says: each route's file and function", () => {
    const doc = readFileSync(join(root, "ARCHITECTURE.md"), "utf8");
    const section = doc.split("## Every route")[1]?.split("\n## ")[0] ?? "";
    const rows = [...section.matchAll(/^\| `(\S+ \S+)` \| `([^`]+)` : `(\w+)` \|$/gm)];
    const documented = new Map(rows.map((m) => [m[1] as string, m[3] as string]));
    expect(Object.fromEntries(documented)).toEqual(Object.fromEntries(routeHandlers()));
    const misplaced = rows
      .filter(
        ([, , file, name]) =>
          !new RegExp(`function ${name}\\(`).test(readFileSync(join(root, "src", file as string), "utf8")),
      )
      .map(([, route, file, name]) => `${route}: ${name} is not a function of src/${file}`);
    expect(misplaced).toEqual([]);
  });
});

/**
 * The waiting room's phases (issue 19), on a server runtime (default Bun), also the `roomwaiters` and
 * `roomcrowd` phases of `npm run bench`: waiters (10, 1,000 and 10,000 ticket streams on one process,
 * joins and ticket reads per second with their cost, the frontier's push latency, Redis commands per
 * second against the number of waiters; bench/phases/room-waiters.ts) and the crowd (100,000 shoppers
 * for 1,000 units, judged by the chaos scenario's rules; bench/phases/room-crowd.ts). Prints the tables
 * and writes bench/output/room.json.
 *
 * @example
 * npx tsx --import ./local/lua-as-text.mjs bench/room.ts                          # both, full size
 * npx tsx --import ./local/lua-as-text.mjs bench/room.ts --waiters 10,1000 --users 5000
 * npx tsx --import ./local/lua-as-text.mjs bench/room.ts --skip crowd
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { ServerRuntimeName } from "../local/server-runtime";
import { loadAverage } from "./measure/run-meta";
import { CROWD_VARS, roomCrowdPhase } from "./phases/room-crowd";
import { roomWaitersPhase } from "./phases/room-waiters";
import { printRoom, type RoomResult } from "./report/room-report";
import { startEngine } from "./setup/engine-server";
import { type BenchEnvironment, startEnvironment } from "./setup/environment";

export type RoomOptions = {
  runtime: ServerRuntimeName;
  waiters: number[];
  users: number;
  rate: number;
  changes: number;
  connections: number;
  skip: Set<string>;
  out: string;
  log: (line: string) => void;
};

/** Limits out of the way (every shopper is its own token and address), room for 20,000 ticket streams. */
const ROOM_VARS = {
  SHOPPER_LIMIT_USER_PER_WINDOW: "1000",
  SHOPPER_LIMIT_IP_PER_WINDOW: "100000",
  RATE_LIMIT_USER_PER_WINDOW: "1000",
  RATE_LIMIT_IP_PER_WINDOW: "100000",
  REALTIME_MAX_ORDER_STREAMS: "20000",
  REALTIME_MAX_TICKET_STREAMS: "20000",
};

/** Both phases, each on its own engine process; `skip` may hold "waiters" and "crowd". */
export async function roomPhases(env: BenchEnvironment, o: RoomOptions): Promise<RoomResult> {
  const result: RoomResult = {
    runtime: o.runtime,
    loadAverage: { atStart: loadAverage(), atEnd: [] },
    waiters: [],
    crowd: null,
  };
  const target = (engine: { url: string; child: { pid?: number } }) => ({
    baseUrl: engine.url,
    pid: engine.child.pid ?? 0,
    redisUrl: env.redisUrl,
    databaseUrl: env.databaseUrl,
    adminToken: env.adminToken,
    jwtSecret: env.jwtSecret,
  });
  const onEngine = async <T>(
    vars: Record<string, string>,
    run: (t: ReturnType<typeof target>) => Promise<T>,
  ) => {
    const engine = await startEngine(
      { ...env, vars: { ...env.vars, ...ROOM_VARS, ...vars } },
      o.runtime,
      (l) => o.log(`  engine: ${l}`),
    );
    try {
      return await run(target(engine));
    } finally {
      await engine.stop();
    }
  };
  if (!o.skip.has("waiters")) {
    o.log(
      `\nroom waiters on ${o.runtime}: ${o.waiters.join(", ")} ticket streams, the frontier moved ${o.changes} times at ${o.rate}/s`,
    );
    result.waiters = await onEngine({}, (t) => roomWaitersPhase(t, { ...o, waiters: o.waiters }));
    result.loadAverage.afterWaiters = loadAverage();
  }
  if (!o.skip.has("crowd")) {
    o.log(`\nroom crowd on ${o.runtime}: ${o.users} shoppers for 1,000 units`);
    result.crowd = await onEngine(CROWD_VARS, (t) =>
      roomCrowdPhase(t, { users: o.users, stock: 1_000, parts: 2, log: o.log }),
    );
  }
  result.loadAverage.atEnd = loadAverage();
  printRoom(result, o.log);
  await mkdir(o.out, { recursive: true });
  await writeFile(join(o.out, "room.json"), `${JSON.stringify(result, null, 2)}\n`);
  o.log(`wrote ${join(o.out, "room.json")}`);
  return result;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      runtime: { type: "string", default: "bun" },
      waiters: { type: "string", default: "10,1000,10000" },
      users: { type: "string", default: "100000" },
      rate: { type: "string", default: "4" },
      changes: { type: "string", default: "20" },
      connections: { type: "string", default: "32" },
      skip: { type: "string", default: "" },
      out: { type: "string", default: join(import.meta.dirname, "output") },
    },
  });
  const log = (line: string) => console.log(line);
  const env = await startEnvironment(log, { worker: false });
  try {
    const r = await roomPhases(env, {
      runtime: values.runtime as ServerRuntimeName,
      waiters: values.waiters.split(",").map(Number),
      users: Number(values.users),
      rate: Number(values.rate),
      changes: Number(values.changes),
      connections: Number(values.connections),
      skip: new Set(values.skip.split(",").filter(Boolean)),
      out: values.out,
      log,
    });
    return (r.crowd?.violations.length ?? 0) === 0 && r.waiters.every((w) => w.frontierBack === 0) ? 0 : 1;
  } finally {
    await env.stop();
  }
}

if (process.argv[1]?.endsWith("room.ts")) {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error);
      process.exit(2);
    },
  );
}

/**
 * The room phases' client process (forked by room-client.ts, so that 10,000 sockets and a crowd's
 * shoppers never share an event loop with the bench): distinct shoppers joining a queue sale and
 * reading their tickets (closed loops over raw keep-alive HTTP), ticket streams (`queue/events`) that
 * keep, per waiter, the time each new frontier arrived, and a part of a crowd (room-crowd.ts). Driven
 * by IPC messages; each answers with one message.
 */
import http from "node:http";
import { shopperToken } from "./jwt";
import { summarize } from "./latency";
import { crowdPlans, runCrowd, summarizeCrowd } from "./room-crowd";
import { httpRoomShop } from "./room-shop";

export type Shoppers = {
  baseUrl: string;
  saleId: string;
  jwtSecret: string;
  prefix: string;
  from: number;
  count: number;
};
export type ToRoomLoad =
  | ({ type: "requests"; method: "POST" | "GET"; connections: number } & Shoppers)
  | ({ type: "watch" } & Shoppers)
  | { type: "latency"; changes: { at: number; frontier: number }[] }
  | { type: "close" }
  | {
      type: "crowd";
      baseUrl: string;
      saleId: string;
      productToken: string;
      jwtSecret: string;
      users: number;
      seed: number;
      part: number;
      parts: number;
      joinConcurrency: number;
      maxStreams: number;
      deadline: number;
    };

type Waiter = { times: number[]; frontiers: number[]; req: http.ClientRequest; status: number; back: number };

const agent = new http.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY, maxFreeSockets: 256 });
const now = () => performance.timeOrigin + performance.now();
const addressOf = (k: number) => `10.${(k >> 16) & 255}.${(k >> 8) & 255}.${k & 255}`;
let waiters: Waiter[] = [];

function headersOf(s: Shoppers, k: number): Record<string, string> {
  return {
    authorization: `Bearer ${shopperToken(s.jwtSecret, `${s.prefix}${k}`)}`,
    "cf-connecting-ip": addressOf(k),
  };
}

function request(url: string, method: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve) => {
    const req = http.request(url, { method, agent, headers });
    req.on("response", (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", () => resolve(0));
    req.end(method === "POST" ? "{}" : undefined);
  });
}

/** Joins (POST) or ticket reads (GET) of shoppers from..from+count, `connections` at a time. */
async function requests(m: Extract<ToRoomLoad, { type: "requests" }>) {
  const url = `${m.baseUrl}/api/sales/${m.saleId}/queue${m.method === "GET" ? "/me" : ""}`;
  const tokens = Array.from({ length: m.count }, (_, i) => headersOf(m, m.from + i));
  const statuses: Record<string, number> = {};
  let next = 0;
  const started = now();
  await Promise.all(
    Array.from({ length: m.connections }, async () => {
      while (next < m.count) {
        const h = tokens[next++] as Record<string, string>;
        const status = await request(url, m.method, { ...h, "content-type": "application/json" });
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
    }),
  );
  return { type: "requested", statuses, durationMs: Math.round(now() - started) };
}

function openWaiter(url: string, headers: Record<string, string>): Promise<Waiter> {
  return new Promise((resolve) => {
    const w: Waiter = {
      times: [],
      frontiers: [],
      status: 0,
      back: 0,
      req: null as unknown as http.ClientRequest,
    };
    let settled = false;
    const done = () => {
      if (!settled) resolve(w);
      settled = true;
    };
    w.req = http.get(url, { agent, headers: { ...headers, accept: "text/event-stream" } }, (res) => {
      w.status = res.statusCode ?? 0;
      if (w.status !== 200) {
        res.resume();
        return done();
      }
      res.setEncoding("utf8");
      let buffer = "";
      res.on("data", (chunk: string) => {
        buffer += chunk;
        for (let cut = buffer.indexOf("\n\n"); cut >= 0; cut = buffer.indexOf("\n\n")) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          // a regex, not JSON.parse: 10,000 waiters parse tens of thousands of events a second
          const frontier = Number(/"frontier":(\d+)/.exec(block)?.[1] ?? Number.NaN);
          if (!block.startsWith("event: ticket") || Number.isNaN(frontier)) continue;
          const last = w.frontiers.at(-1);
          if (last !== undefined && frontier < last) w.back++;
          if (last === undefined || frontier > last) {
            w.times.push(now());
            w.frontiers.push(frontier);
          }
          done();
        }
      });
      res.on("error", done);
      res.on("end", done);
    });
    w.req.on("error", done);
  });
}

/** Opens the shoppers' ticket streams, 200 at a time; resolves once each has its first event or failed. */
async function watch(m: Extract<ToRoomLoad, { type: "watch" }>) {
  const url = `${m.baseUrl}/api/sales/${m.saleId}/queue/events`;
  const started = now();
  for (let i = 0; i < m.count; i += 200) {
    const batch = Array.from({ length: Math.min(200, m.count - i) }, (_, j) =>
      openWaiter(url, headersOf(m, m.from + i + j)),
    );
    waiters.push(...(await Promise.all(batch)));
  }
  const statuses: Record<string, number> = {};
  for (const w of waiters) statuses[w.status] = (statuses[w.status] ?? 0) + 1;
  const open = waiters.filter((w) => w.frontiers.length > 0).length;
  return { type: "watching", open, statuses, connectMs: Math.round(now() - started) };
}

/** Per (change, waiter): from the change's answer to the waiter's first event with that frontier or more. */
function latency(changes: { at: number; frontier: number }[]) {
  const values = new Float64Array(waiters.length * changes.length);
  let n = 0;
  let missed = 0;
  let back = 0;
  for (const w of waiters) {
    if (w.frontiers.length === 0) continue;
    back += w.back;
    let j = 0;
    for (const c of changes) {
      while (j < w.frontiers.length && (w.frontiers[j] as number) < c.frontier) j++;
      if (j === w.frontiers.length) missed++;
      else values[n++] = Math.max(0, (w.times[j] as number) - c.at);
    }
  }
  return { type: "latency", latency: summarize(values.subarray(0, n)), missed, back };
}

async function crowd(m: Extract<ToRoomLoad, { type: "crowd" }>) {
  const tokens = new Map<string, string>();
  const shop = httpRoomShop({
    baseUrl: m.baseUrl,
    saleId: m.saleId,
    productToken: m.productToken,
    tokenOf: (u) => tokens.get(u) ?? (tokens.set(u, shopperToken(m.jwtSecret, u)).get(u) as string),
    addressOf: (u) => addressOf(Number(u.slice(1))),
  });
  const plans = crowdPlans({ users: m.users, seed: m.seed }).filter((_, i) => i % m.parts === m.part);
  const started = now();
  let joinsDoneMs = 0;
  const records = await runCrowd(shop, plans, {
    joinConcurrency: m.joinConcurrency,
    maxStreams: m.maxStreams,
    deadline: m.deadline,
    onJoinsDone: () => {
      joinsDoneMs = Math.round(now() - started);
    },
  });
  return {
    type: "crowded",
    summary: summarizeCrowd(records),
    joinsDoneMs,
    durationMs: Math.round(now() - started),
  };
}

function close() {
  for (const w of waiters) w.req.destroy();
  waiters = [];
  return { type: "closed" };
}

process.on("message", async (m: ToRoomLoad) => {
  try {
    if (m.type === "requests") process.send?.(await requests(m));
    else if (m.type === "watch") process.send?.(await watch(m));
    else if (m.type === "latency") process.send?.(latency(m.changes));
    else if (m.type === "crowd") process.send?.(await crowd(m));
    else if (m.type === "close") process.send?.(close());
  } catch (error) {
    process.send?.({ type: "error", message: String((error as Error)?.stack ?? error) });
  }
});
process.send?.({ type: "ready" });

/**
 * The realtime phase's client process (forked by `realtime.ts`, so that 10,000 sockets never share an
 * event loop with the servers under test): SSE watchers on raw keep-alive HTTP connections, a steady
 * stream of buys, and polling shoppers. Driven by IPC messages; each answers with one message.
 *
 * A watcher keeps, per change of `remaining`, the time it saw it; a buy keeps the time its 202 arrived and
 * the remaining after it (buys go one at a time, so that is stock minus the units bought so far). The push
 * latency of (buy, watcher) is the time from the 202 to the watcher's first event with remaining ≤ that.
 */
import http from "node:http";
import { shopperToken } from "./jwt";
import { summarize } from "./latency";

type Watcher = { times: number[]; remaining: number[]; req: http.ClientRequest; status: number };
export type BuyPlan = {
  baseUrl: string;
  productToken: string;
  stock: number;
  quantity: number;
  rate: number;
  jwtSecret: string;
  tag: string;
};
export type ToRealtimeLoad =
  | { type: "watch"; url: string; count: number }
  | { type: "buy"; plan: BuyPlan }
  | { type: "latency" }
  | { type: "poll"; url: string; shoppers: number; everyMs: number; durationMs: number }
  | { type: "close" };

const agent = new http.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY, maxFreeSockets: 64 });
const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let watchers: Watcher[] = [];
let buys: { at: number; remaining: number }[] = [];

/** The k-th shopper's client address: watchers and pollers are many shoppers, not one address (limited per address). */
const addressOf = (k: number) => `10.${(k >> 16) & 255}.${(k >> 8) & 255}.${k & 255}`;
let opened = 0;

function openWatcher(url: string): Promise<Watcher> {
  return new Promise((resolve) => {
    const w: Watcher = { times: [], remaining: [], status: 0, req: null as unknown as http.ClientRequest };
    let settled = false;
    const done = () => {
      if (!settled) resolve(w);
      settled = true;
    };
    const headers = { accept: "text/event-stream", "cf-connecting-ip": addressOf(opened++) };
    w.req = http.get(url, { agent, headers }, (res) => {
      w.status = res.statusCode ?? 0;
      if (w.status !== 200) {
        res.resume();
        return done();
      }
      res.setEncoding("utf8");
      let buffer = "";
      res.on("data", (chunk: string) => {
        buffer += chunk;
        let cut = buffer.indexOf("\n\n");
        while (cut >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (data && block.startsWith("event: sale")) {
            // a regex, not JSON.parse: 10,000 watchers parse 40,000 events/s on the cores the engine uses
            const remaining = Number(/"remaining":(\d+)/.exec(data)?.[1]);
            if (w.remaining.at(-1) !== remaining) {
              w.times.push(now());
              w.remaining.push(remaining);
            }
            done();
          }
          cut = buffer.indexOf("\n\n");
        }
      });
      res.on("error", done);
      res.on("end", done);
    });
    w.req.on("error", done);
  });
}

/** Opens `count` watchers, 200 at a time; resolves once each has its first event or failed. */
async function watch(url: string, count: number) {
  const started = now();
  for (let i = 0; i < count; i += 200) {
    const batch = Array.from({ length: Math.min(200, count - i) }, () => openWatcher(url));
    watchers.push(...(await Promise.all(batch)));
  }
  const statuses: Record<string, number> = {};
  for (const w of watchers) statuses[w.status] = (statuses[w.status] ?? 0) + 1;
  const open = watchers.filter((w) => w.remaining.length > 0).length;
  return { type: "watching", open, statuses, connectMs: Math.round(now() - started) };
}

async function post(url: string, token: string, ip: string, body: string): Promise<number> {
  return new Promise((resolve) => {
    const req = http.request(url, {
      method: "POST",
      agent,
      headers: {
        authorization: `Bearer ${token}`,
        "cf-connecting-ip": ip,
        "content-type": "application/json",
      },
    });
    req.on("response", (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", () => resolve(0));
    req.end(body);
  });
}

/** Buys one at a time at `rate` per second until the stock is gone. */
async function buy(p: BuyPlan) {
  buys = [];
  let remaining = p.stock;
  const statuses: Record<string, number> = {};
  const tokens = Array.from({ length: Math.ceil(p.stock / p.quantity) }, (_, i) =>
    shopperToken(p.jwtSecret, `${p.tag}-u${i}`),
  );
  const started = now();
  for (let i = 0; i < tokens.length; i++) {
    const wait = started + (i * 1000) / p.rate - now();
    if (wait > 0) await sleep(wait);
    const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
    const status = await post(
      `${p.baseUrl}/api/buy/${p.productToken}`,
      tokens[i] as string,
      ip,
      `{"quantity":${p.quantity}}`,
    );
    statuses[status] = (statuses[status] ?? 0) + 1;
    if (status === 202) {
      remaining -= p.quantity;
      buys.push({ at: now(), remaining });
    }
  }
  return { type: "bought", statuses, durationMs: Math.round(now() - started) };
}

/** Push latency over every (buy, open watcher) pair; a pair whose change never arrived counts as missed. */
function latency() {
  const values = new Float64Array(watchers.length * buys.length);
  let n = 0;
  let missed = 0;
  for (const w of watchers) {
    if (w.remaining.length === 0) continue;
    let j = 0;
    for (const b of buys) {
      while (j < w.remaining.length && (w.remaining[j] as number) > b.remaining) j++;
      if (j === w.remaining.length) missed++;
      else values[n++] = Math.max(0, (w.times[j] as number) - b.at);
    }
  }
  return { type: "latency", latency: summarize(values.subarray(0, n)), missed };
}

/** `shoppers` pages each polling GET `url` every `everyMs` (staggered) for `durationMs`. */
async function poll(url: string, shoppers: number, everyMs: number, durationMs: number) {
  const pollAgent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const statuses: Record<string, number> = {};
  let requests = 0;
  const get = (k: number) =>
    new Promise<void>((resolve) => {
      http
        .get(url, { agent: pollAgent, headers: { "cf-connecting-ip": addressOf(k % shoppers) } }, (res) => {
          res.resume();
          res.on("end", () => {
            statuses[res.statusCode ?? 0] = (statuses[res.statusCode ?? 0] ?? 0) + 1;
            resolve();
          });
        })
        .on("error", () => resolve());
    });
  const started = now();
  const inFlight: Promise<void>[] = [];
  for (let k = 0; now() - started < durationMs; k++) {
    const at = started + (k * everyMs) / shoppers;
    if (at - now() > 0) await sleep(at - now());
    requests++;
    inFlight.push(get(k));
  }
  await Promise.all(inFlight);
  pollAgent.destroy();
  return { type: "polled", requests, statuses, durationMs: Math.round(now() - started) };
}

function close() {
  for (const w of watchers) w.req.destroy();
  watchers = [];
  return { type: "closed" };
}

process.on("message", async (m: ToRealtimeLoad) => {
  try {
    if (m.type === "watch") process.send?.(await watch(m.url, m.count));
    else if (m.type === "buy") process.send?.(await buy(m.plan));
    else if (m.type === "latency") process.send?.(latency());
    else if (m.type === "poll") process.send?.(await poll(m.url, m.shoppers, m.everyMs, m.durationMs));
    else if (m.type === "close") process.send?.(close());
  } catch (error) {
    process.send?.({ type: "error", message: String((error as Error)?.stack ?? error) });
  }
});
process.send?.({ type: "ready" });

/**
 * The load of the shopper-flood rows (bench/shopper-flood.ts): one shopper's requests on one token and
 * one client address, closed loop; other shoppers' buys at a steady rate; the flooder's orders.
 */
import type { BenchEnvironment } from "../setup/environment";
import { shopperToken } from "./jwt";
import { summarize } from "./latency";

export type Call = () => Promise<number>;
export type Target = { route: string; call: Call };

const FLOODER_IP = "203.0.113.50";
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A request as a shopper's script sends it; a stream is opened, its first bytes read, then dropped. */
function requester(baseUrl: string, token: string | null, ip: string) {
  return async (method: string, path: string, stream = false): Promise<number> => {
    const abort = new AbortController();
    try {
      const res = await fetch(`${baseUrl}${path}`, {
        method,
        signal: abort.signal,
        headers: { "cf-connecting-ip": ip, ...(token ? { authorization: `Bearer ${token}` } : {}) },
      });
      if (stream && res.status === 200) await res.body?.getReader().read();
      else await res.arrayBuffer();
      abort.abort();
      return res.status;
    } catch {
      return 0;
    }
  };
}

/** Runs `call` on `connections` loops for `seconds`; the statuses counted. */
export async function closedLoop(call: Call, connections: number, seconds: number) {
  const until = Date.now() + seconds * 1000;
  const statuses: Record<string, number> = {};
  let requests = 0;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (Date.now() < until) {
        const status = await call();
        statuses[status] = (statuses[status] ?? 0) + 1;
        requests++;
      }
    }),
  );
  return { statuses, requests };
}

/** Buys of one unit by new shoppers (each its own token and address) at `rate`/s for `seconds`: their latencies. */
export async function bystanders(
  env: BenchEnvironment,
  baseUrl: string,
  productToken: string,
  rate: number,
  seconds: number,
) {
  const latencies: number[] = [];
  const pending: Promise<void>[] = [];
  const started = performance.now();
  for (let i = 0; i < rate * seconds; i++) {
    const wait = started + (i * 1000) / rate - performance.now();
    if (wait > 0) await sleep(wait);
    const n = Math.floor(Math.random() * 1e9);
    const buy = requester(
      baseUrl,
      shopperToken(env.jwtSecret, `bystander-${n}`),
      `10.${n % 250}.${(n >> 8) % 250}.${(n >> 16) % 250}`,
    );
    pending.push(
      (async () => {
        const t0 = performance.now();
        await buy("POST", `/api/buy/${productToken}`);
        latencies.push(performance.now() - t0);
      })(),
    );
  }
  await Promise.all(pending);
  return summarize(latencies);
}

/** The flooder's orders (awaiting payment, paid, cancelled) and the routes flooded with its one token. */
export async function targets(
  env: BenchEnvironment,
  baseUrl: string,
  saleId: string,
  productToken: string,
): Promise<Target[]> {
  const token = shopperToken(env.jwtSecret, "flooder");
  const send = requester(baseUrl, token, FLOODER_IP);
  const anonymous = requester(baseUrl, null, FLOODER_IP);
  const order = async () => {
    const res = await fetch(`${baseUrl}/api/buy/${productToken}`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "cf-connecting-ip": FLOODER_IP },
    });
    const body = (await res.json()) as { orderId?: string };
    if (!body.orderId) throw new Error(`the flooder's buy: ${res.status} ${JSON.stringify(body)}`);
    for (let i = 0; i < 100; i++) {
      const read = await fetch(`${baseUrl}/api/orders/${body.orderId}`, {
        headers: { authorization: `Bearer ${token}`, "cf-connecting-ip": "192.0.2.1" },
      });
      if (((await read.json()) as { status?: string }).status === "awaiting_payment") break;
      await sleep(100); // until the order-write job wrote it to Postgres
    }
    return body.orderId;
  };
  const [open, paid, cancelled] = [await order(), await order(), await order()];
  await send("POST", `/api/orders/${paid}/pay`);
  await send("POST", `/api/orders/${cancelled}/cancel`);
  await sleep(1_100); // a fresh window for the first row
  return [
    { route: "GET /api/orders/:id (awaiting payment)", call: () => send("GET", `/api/orders/${open}`) },
    { route: "GET /api/orders/:id (paid)", call: () => send("GET", `/api/orders/${paid}`) },
    { route: "POST /api/orders/:id/pay (paid)", call: () => send("POST", `/api/orders/${paid}/pay`) },
    {
      route: "POST /api/orders/:id/cancel (cancelled)",
      call: () => send("POST", `/api/orders/${cancelled}/cancel`),
    },
    { route: "GET /api/orders/:id/events", call: () => send("GET", `/api/orders/${open}/events`, true) },
    { route: "GET /api/sales/:id", call: () => anonymous("GET", `/api/sales/${saleId}`) },
    { route: "GET /api/sales", call: () => anonymous("GET", "/api/sales") },
    { route: "GET /api/sales/:id/events", call: () => anonymous("GET", `/api/sales/${saleId}/events`, true) },
  ];
}

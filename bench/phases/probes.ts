/**
 * Per-outcome probes: short runs in which every attempt gets the same answer, each measured on its own
 * (Redis commandstats, redis-server CPU, workerd CPU), with QStash delivery paused so the order pipeline
 * does not mix its work in. Some need a preparation run first (not measured): users who already hold
 * their limit, users who used up their rate limit, users whose keyed attempt is to be replayed.
 */
import type { ListPlan, Target } from "../clients/protocol";
import { clientIp } from "../clients/scenario";

export type Probe = {
  name: string;
  /** The answer every measured attempt should get. */
  expect: string;
  prepare?: ListPlan["items"];
  items: ListPlan["items"];
  target: Target;
};

type Sales = { soldOutToken: string; openToken: string; baseUrl: string };

const buy = (baseUrl: string, token: string): Target => ({
  baseUrl,
  path: `/api/buy/${token}`,
  method: "POST",
});
const item = (user: string, ip: number, quantity: number, key?: string) => ({
  user,
  quantity,
  ip: clientIp(ip),
  ...(key ? { key } : {}),
});
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

/** A token of the right shape that no sale has (43 base64url characters). */
function unknownToken(i: number): string {
  return `zz${i.toString(36).padStart(12, "0")}`.padEnd(43, "Q");
}

/**
 * The probes, `n` measured attempts each. `open` is a sale with stock to spare and a limit of 2;
 * `soldOut` is the seed-000 sale after the rush. User ids are unique to each probe and run (`tag`).
 */
export function probes(sales: Sales, n: number, tag: string): Probe[] {
  const open = buy(sales.baseUrl, sales.openToken);
  const soldOut = buy(sales.baseUrl, sales.soldOutToken);
  const u = (probe: string, i: number) => `${tag}-${probe}-${i}`;
  const hammerers = Math.max(1, Math.ceil(n / 10));
  const health: Target = { baseUrl: sales.baseUrl, path: "/api/health", method: "GET" };
  return [
    {
      name: "no-op route GET /api/health",
      expect: "200",
      target: health,
      items: range(n).map((i) => item(u("n", i), i, 1)),
    },
    {
      name: "no shopper token",
      expect: "401 UNAUTHENTICATED",
      target: open,
      items: range(n).map((i) => ({ ...item(u("a", i), i, 1), anonymous: true })),
    },
    {
      name: "malformed product token",
      expect: "404 UNKNOWN_PRODUCT",
      target: buy(sales.baseUrl, "not-a-product-token"),
      items: range(n).map((i) => item(u("m", i), i, 1)),
    },
    {
      name: "unknown product (Bloom miss)",
      expect: "404 UNKNOWN_PRODUCT",
      target: buy(sales.baseUrl, "{token}"),
      items: range(n).map((i) => ({ ...item(u("b", i), i, 1), token: unknownToken(i) })),
    },
    {
      name: "sold out, warm isolate",
      expect: "410 SOLD_OUT",
      target: soldOut,
      items: range(n).map((i) => item(u("s", i), i, 1)),
    },
    {
      name: "sold out, keyed (script answers)",
      expect: "410 SOLD_OUT",
      target: soldOut,
      items: range(n).map((i) => item(u("sk", i), i, 1, `key-${i}`)),
    },
    {
      name: "asks more than the limit",
      expect: "409 LIMIT_EXCEEDED",
      target: open,
      items: range(n).map((i) => item(u("l", i), i, 3)),
    },
    {
      name: "rate limited (hammering)",
      expect: "429 RATE_LIMITED",
      target: open,
      prepare: range(hammerers * 5).map((i) => item(u("h", i % hammerers), i % hammerers, 3)),
      items: range(n).map((i) => item(u("h", i % hammerers), i % hammerers, 3)),
    },
    {
      name: "reserve (admitted, stock left)",
      expect: "202",
      target: open,
      items: range(n).map((i) => item(u("r", i), i, 2)),
    },
    {
      name: "already holds the limit",
      expect: "409 ALREADY_PURCHASED",
      target: open,
      items: range(n).map((i) => item(u("r", i), i, 1)),
    },
    {
      name: "replay of a keyed attempt",
      expect: "202",
      target: open,
      prepare: range(n).map((i) => item(u("k", i), i, 1, `key-${i}`)),
      items: range(n).map((i) => item(u("k", i), i, 1, `key-${i}`)),
    },
  ];
}

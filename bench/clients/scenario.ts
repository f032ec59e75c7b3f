/**
 * The seed-000 crowd, generated the same way for every target: `users` distinct shoppers in a seeded
 * random order, each asking for 1 or 2 units; some send an Idempotency-Key and retry the same attempt a
 * little later (a client timeout), some hammer the button in a burst past their rate limit.
 *
 * @example
 * const crowd = seedScenario({ users: 100_000, seed: 0 });
 * crowd.attempts; // ≈ 132,000 for 100,000 users
 */

export type ScenarioOptions = {
  users: number;
  seed: number;
  /** Share of users who send an Idempotency-Key and retry once with the same key. Default 0.1. */
  retryShare?: number;
  /** Share of users who hammer: `hammerBurst` attempts at once, no key. Default 0.02. */
  hammerShare?: number;
  hammerBurst?: number;
};

/** What an attempt is part of: a single try, a keyed attempt and its retry, or a hammering burst. */
export const Kind = { Single: 0, Retry: 1, Hammer: 2 } as const;
export type Kind = (typeof Kind)[keyof typeof Kind];

/** Column arrays, one entry per attempt, in the order attempts are sent. */
export type Scenario = {
  users: number;
  attempts: number;
  user: Int32Array;
  quantity: Uint8Array;
  kind: Uint8Array;
  /** 1 when the attempt carries the user's Idempotency-Key (`idempotencyKey(user)`). */
  keyed: Uint8Array;
};

/** mulberry32: a small, fast, seeded PRNG (same crowd on every run and every target). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

export function seedScenario(options: ScenarioOptions): Scenario {
  const random = prng(options.seed);
  const retryShare = options.retryShare ?? 0.1;
  const hammerShare = options.hammerShare ?? 0.02;
  const burst = options.hammerBurst ?? 12;
  const order = Int32Array.from({ length: options.users }, (_, i) => i);
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j] as number, order[i] as number];
  }

  const slot: number[] = [];
  const user: number[] = [];
  const quantity: number[] = [];
  const kind: number[] = [];
  const keyed: number[] = [];
  const push = (at: number, u: number, q: number, k: Kind, withKey: boolean) => {
    slot.push(at);
    user.push(u);
    quantity.push(q);
    kind.push(k);
    keyed.push(withKey ? 1 : 0);
  };
  order.forEach((u, position) => {
    const q = random() < 0.5 ? 1 : 2;
    const roll = random();
    if (roll < hammerShare) {
      for (let i = 0; i < burst; i++) push(position + i / (burst * 10), u, q, Kind.Hammer, false);
    } else if (roll < hammerShare + retryShare) {
      push(position, u, q, Kind.Retry, true);
      push(position + 1 + random() * 200, u, q, Kind.Retry, true);
    } else {
      push(position, u, q, Kind.Single, false);
    }
  });

  const index = Array.from(slot.keys()).sort((a, b) => (slot[a] as number) - (slot[b] as number));
  const pick = <T extends Int32Array | Uint8Array>(into: T, from: number[]): T => {
    index.forEach((from_i, to) => {
      into[to] = from[from_i] as number;
    });
    return into;
  };
  const n = index.length;
  return {
    users: options.users,
    attempts: n,
    user: pick(new Int32Array(n), user),
    quantity: pick(new Uint8Array(n), quantity),
    kind: pick(new Uint8Array(n), kind),
    keyed: pick(new Uint8Array(n), keyed),
  };
}

/** The shopper id of user `u` in a crowd tagged `tag` (so two crowds never share a user). */
export function userId(tag: string, u: number): string {
  return `${tag}-u${u}`;
}

/** The user's Idempotency-Key (one per user: a retry repeats the same attempt). */
export function idempotencyKey(u: number): string {
  return `k-${u}`;
}

/** A client address per user, as Cloudflare's edge would pass it in CF-Connecting-IP. */
export function clientIp(u: number): string {
  return `10.${(u >> 16) & 255}.${(u >> 8) & 255}.${u & 255}`;
}

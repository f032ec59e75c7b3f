/**
 * Product-token enumeration: `count` random 43-character base64url tokens (the shape of a real one, so
 * each passes the shape check and meets the Bloom filter) sent to the buy route by a signed-in shopper.
 * Returns the answers and the Redis commands they caused (INFO commandstats): a stock command is any
 * script call or any write; Bloom false positives cost one HGET on the token index each.
 */
import type { Redis } from "ioredis";
import { commandCounts, commandDelta } from "../test/support/redis-inspect";
import { shopperToken } from "../test/support/shopper";

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
/** Commands that only read (anything else reaching Redis during an enumeration is a finding). */
export const READ_COMMANDS = new Set([
  "get",
  "mget",
  "hget",
  "hmget",
  "hgetall",
  "hlen",
  "smembers",
  "zrange",
  "multi",
  "exec",
]);

export type Enumeration = {
  count: number;
  answers: Record<string, number>;
  commands: Record<string, number>;
  scriptCalls: number;
  writes: Record<string, number>;
  /** guesses sent again because the connection closed before an answer (no answer was counted for them) */
  resent: number;
  ms: number;
};

/**
 * A connection the server closed as the guess went out on it (a kept-alive socket the engine had just
 * dropped, seen under load): no answer came, so the guess is sent again, as a client would.
 */
function connectionClosed(error: unknown): boolean {
  const cause = (error as { cause?: { code?: string } }).cause;
  return error instanceof TypeError && ["UND_ERR_SOCKET", "ECONNRESET"].includes(String(cause?.code));
}

/** Waits until the sale has nothing queued (the warm-up order is written and acknowledged). */
export async function untilWritten(redis: Redis, ordersKey: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await redis.hlen(ordersKey)) > 0 && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 50));
}

export function randomToken(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(43)), (b) => ALPHABET[b % 64]).join("");
}

export async function enumerateTokens(
  target: { url: string; redis: Redis },
  count: number,
  opts: {
    concurrency?: number;
    onAnswer?: (status: number, code: string | undefined) => void;
    /** how to send (a test passes a fetch that checks each answer against the OpenAPI document) */
    fetch?: (url: string, init: RequestInit) => Promise<Response>;
  } = {},
): Promise<Enumeration> {
  const token = await shopperToken("enumerator");
  const send = opts.fetch ?? fetch;
  const answers: Record<string, number> = {};
  const started = Date.now();
  const before = await commandCounts(target.redis);
  let sent = 0;
  let resent = 0;
  const guess = async (): Promise<Response> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await send(`${target.url}/api/buy/${randomToken()}`, {
          method: "POST",
          headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
          body: '{"quantity":1}',
        });
      } catch (error) {
        if (attempt === 3 || !connectionClosed(error)) throw error;
        resent++;
      }
    }
  };
  await Promise.all(
    Array.from({ length: opts.concurrency ?? 24 }, async () => {
      while (sent < count) {
        sent++;
        const res = await guess();
        const code = ((await res.json().catch(() => ({}))) as { error?: { code?: string } }).error?.code;
        const key = `${res.status} ${code ?? ""}`.trim();
        answers[key] = (answers[key] ?? 0) + 1;
        opts.onAnswer?.(res.status, code);
      }
    }),
  );
  const commands = commandDelta(before, await commandCounts(target.redis));
  const writes = Object.fromEntries(Object.entries(commands).filter(([c]) => !READ_COMMANDS.has(c)));
  return {
    count,
    answers,
    commands,
    scriptCalls:
      (commands.evalsha ?? 0) + (commands.eval ?? 0) + (commands.evalsha_ro ?? 0) + (commands.fcall ?? 0),
    writes,
    resent,
    ms: Date.now() - started,
  };
}

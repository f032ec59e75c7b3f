/**
 * A shopper client that writes every call into a {@link History}: buy, pay, cancel and poll, each with a
 * deadline. A call that times out or loses its connection is `unknown`, never `failed`.
 *
 * @example
 * const client = recordingClient(worker.url, history, { timeoutMs: 5_000 });
 * const op = await client.buy(productToken, "u1", 2, "u1-0");
 * if (op.outcome === "ok") await client.pay(op.orderId!, "u1");
 */
import { shopperToken } from "../test/support/shopper";
import { classify, type History, type Op, type OpKind } from "./history";

type Answer = { status: number; body: Record<string, unknown> } | { error: string };

export function recordingClient(
  baseUrl: string,
  history: History,
  opts: { timeoutMs?: number; fetch?: typeof fetch } = {},
) {
  const timeoutMs = opts.timeoutMs ?? 5_000;
  const request = opts.fetch ?? fetch;
  const tokenFor = shopperTokens();

  async function send(method: string, path: string, userId: string, init: RequestInit = {}): Promise<Answer> {
    try {
      const res = await request(`${baseUrl}${path}`, {
        ...init,
        method,
        headers: { Authorization: `Bearer ${await tokenFor(userId)}`, ...(init.headers as object) },
        signal: AbortSignal.timeout(timeoutMs),
      });
      const text = await res.text();
      let body: Record<string, unknown> = {};
      try {
        body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
      } catch {
        body = { raw: text.slice(0, 200) };
      }
      return { status: res.status, body };
    } catch (error) {
      return {
        error: (error as Error).name === "TimeoutError" ? "timeout" : String((error as Error).message),
      };
    }
  }

  function finish(kind: OpKind, op: Op, answer: Answer): Op {
    if ("error" in answer) return history.complete(op, { outcome: "unknown", note: answer.error });
    const { status, body } = answer;
    const code = (body.error as { code?: string } | undefined)?.code;
    return history.complete(op, {
      outcome: classify(kind, status),
      status,
      ...(code ? { code } : {}),
      ...(typeof body.orderId === "string" ? { orderId: body.orderId } : {}),
      ...(typeof body.status === "string" && kind !== "buy" ? { orderStatus: body.status } : {}),
    });
  }

  return {
    history,
    async buy(productToken: string, userId: string, quantity: number, idempotencyKey?: string): Promise<Op> {
      const op = history.invoke({
        kind: "buy",
        userId,
        quantity,
        ...(idempotencyKey ? { idempotencyKey } : {}),
      });
      const answer = await send("POST", `/api/buy/${productToken}`, userId, {
        headers: {
          "Content-Type": "application/json",
          ...(idempotencyKey ? { "Idempotency-Key": idempotencyKey } : {}),
        },
        body: JSON.stringify({ quantity }),
      });
      return finish("buy", op, answer);
    },
    async act(action: "pay" | "cancel", orderId: string, userId: string): Promise<Op> {
      const op = history.invoke({ kind: action, userId, orderId });
      return finish(action, op, await send("POST", `/api/orders/${orderId}/${action}`, userId));
    },
    async get(orderId: string, userId: string): Promise<Op> {
      const op = history.invoke({ kind: "get", userId, orderId });
      return finish("get", op, await send("GET", `/api/orders/${orderId}`, userId));
    },
  };
}

export type RecordingClient = ReturnType<typeof recordingClient>;

/** Each shopper's token, minted once (valid six hours: longer than any scenario). */
function shopperTokens(): (userId: string) => Promise<string> {
  const tokens = new Map<string, Promise<string>>();
  return (userId) => {
    let token = tokens.get(userId);
    if (!token) {
      token = shopperToken(userId, { expiresInSeconds: 6 * 3600 });
      tokens.set(userId, token);
    }
    return token;
  };
}

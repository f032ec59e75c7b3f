/**
 * What a shopper in a waiting room calls (the contract's Admission routes, the buy with its `Admission`
 * header, pay and cancel), as a port, and its HTTP implementation over `fetch`: each shopper signs in
 * with its own token and comes from its own client address. The chaos scenario wraps `buy` and `act`
 * to record them in its history (chaos/scenarios/room-crowd.ts).
 *
 * @example
 * const shop = httpRoomShop({ baseUrl, saleId, productToken, tokenOf });
 * const ticket = await shop.join("c42");
 */

export type Verdict = "will_get" | "may_get" | "will_not_get" | "admitted" | "lapsed";

export type Ticket = {
  ticketId: string;
  position: number;
  frontier: number;
  verdict: Verdict;
  estimatedWaitSeconds: number;
  admission?: { token: string; expiresAt: string };
};

/** An answer: its status, its body when 2xx, the error code otherwise; 0 when no answer came. */
/** An admission token's units, read from its claims without a check (the engine checks it). */
export function unitsOf(token: string): number {
  try {
    const payload = JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString("utf8"));
    return Number(payload.units) || 1;
  } catch {
    return 1;
  }
}

export type Answer<T> = { status: number; body?: T; code?: string; retryAfterMs?: number };

export type RoomShop = {
  join(userId: string): Promise<Answer<Ticket>>;
  me(userId: string): Promise<Answer<Ticket>>;
  /** Streams the shopper's tickets to `on` until it answers false or `signal` aborts; resolves with the status. */
  watch(userId: string, on: (t: Ticket) => boolean, signal: AbortSignal): Promise<number>;
  buy(userId: string, quantity: number, admission: string): Promise<Answer<{ orderId: string }>>;
  act(action: "pay" | "cancel", orderId: string, userId: string): Promise<Answer<{ status: string }>>;
};

type ShopOptions = {
  baseUrl: string;
  saleId: string;
  productToken: string;
  tokenOf: (userId: string) => string | Promise<string>;
  addressOf: (userId: string) => string;
  timeoutMs?: number;
};

export function httpRoomShop(o: ShopOptions): RoomShop {
  const timeoutMs = o.timeoutMs ?? 15_000;
  const headers = async (userId: string, extra: Record<string, string> = {}) => ({
    Authorization: `Bearer ${await o.tokenOf(userId)}`,
    "CF-Connecting-IP": o.addressOf(userId),
    ...extra,
  });
  async function call<T>(method: string, path: string, userId: string, init: RequestInit = {}) {
    try {
      const res = await fetch(`${o.baseUrl}${path}`, {
        ...init,
        method,
        headers: await headers(userId, init.headers as Record<string, string>),
        signal: AbortSignal.timeout(timeoutMs),
      });
      const text = await res.text();
      const body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
      const retryAfter = Number(res.headers.get("Retry-After"));
      if (res.ok) return { status: res.status, body: body as T } satisfies Answer<T>;
      return {
        status: res.status,
        code: (body.error as { code?: string } | undefined)?.code ?? "",
        ...(retryAfter > 0 ? { retryAfterMs: retryAfter * 1000 } : {}),
      } satisfies Answer<T>;
    } catch {
      return { status: 0 } satisfies Answer<T>;
    }
  }
  const room = `/api/sales/${o.saleId}/queue`;
  return {
    join: (u) =>
      call<Ticket>("POST", room, u, { headers: { "Content-Type": "application/json" }, body: "{}" }),
    me: (u) => call<Ticket>("GET", `${room}/me`, u),
    buy: (u, quantity, admission) =>
      call("POST", `/api/buy/${o.productToken}`, u, {
        headers: { "Content-Type": "application/json", Admission: admission },
        body: JSON.stringify({ quantity }),
      }),
    act: (action, orderId, u) => call("POST", `/api/orders/${orderId}/${action}`, u),
    async watch(u, on, signal) {
      try {
        const res = await fetch(`${o.baseUrl}${room}/events`, {
          headers: await headers(u, { Accept: "text/event-stream" }),
          signal,
        });
        if (res.status !== 200 || !res.body) {
          await res.text().catch(() => "");
          return res.status;
        }
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = "";
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return 200;
          buffer += value;
          for (let cut = buffer.indexOf("\n\n"); cut >= 0; cut = buffer.indexOf("\n\n")) {
            const block = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            const data = /^data: (.*)$/m.exec(block)?.[1];
            if (data && block.startsWith("event: ticket") && !on(JSON.parse(data) as Ticket)) {
              await reader.cancel().catch(() => undefined);
              return 200;
            }
          }
        }
      } catch {
        return signal.aborted ? 200 : 0;
      }
    },
  };
}

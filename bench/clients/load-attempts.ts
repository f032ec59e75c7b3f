/**
 * The load generator's requests: a plan's attempts built before the clock starts (shopper tokens minted
 * once per user), one request on a keep-alive agent, and an answer read as an outcome label.
 */
import type { Agent } from "node:http";
import { request } from "node:http";
import { shopperToken } from "./jwt";
import type { LoadPlan } from "./protocol";
import { clientIp, idempotencyKey, seedScenario, userId } from "./scenario";

export type Attempt = { path: string; headers: Record<string, string>; body?: string };
export type Answer = { status: number; body: string } | { error: string };

/** The plan's attempts, in order: an explicit list, or the seeded crowd. */
export function attempts(plan: LoadPlan): { count: number; at: (i: number) => Attempt } {
  const post = plan.target.method === "POST";
  const tokens = new Map<string, string>();
  const bearer = (user: string) => {
    let token = tokens.get(user);
    if (!token) {
      token = `Bearer ${shopperToken(plan.jwtSecret, user)}`;
      tokens.set(user, token);
    }
    return token;
  };
  const build = (
    user: string,
    quantity: number,
    ip: string,
    key?: string,
    token?: string,
    anonymous = false,
    body?: string,
  ): Attempt => {
    const path = token ? plan.target.path.replace("{token}", token) : plan.target.path;
    const headers: Record<string, string> = { "cf-connecting-ip": ip };
    if (!anonymous) headers.authorization = bearer(user);
    if (key) headers["idempotency-key"] = key;
    if (!post) return { path, headers };
    headers["content-type"] = "application/json";
    return { path, headers, body: body ?? `{"quantity":${quantity}}` };
  };
  if (plan.kind === "list") {
    const built = plan.items.map((it) =>
      build(it.user, it.quantity, it.ip, it.key, it.token, it.anonymous, it.body),
    );
    return { count: built.length, at: (i) => built[i] as Attempt };
  }
  const crowd = seedScenario({ users: plan.users, seed: plan.seed });
  const built: Attempt[] = [];
  for (let i = 0; i < crowd.attempts; i++) {
    const u = crowd.user[i] as number;
    const key = crowd.keyed[i] ? idempotencyKey(u) : undefined;
    built.push(build(userId(plan.tag, u), crowd.quantity[i] as number, clientIp(u), key));
  }
  return { count: built.length, at: (i) => built[i] as Attempt };
}

/** Sends one attempt; a network error or timeout is an answer too. */
export function fire(agent: Agent, base: URL, method: string, a: Attempt): Promise<Answer> {
  return new Promise((resolve) => {
    const req = request(
      {
        host: base.hostname,
        port: base.port,
        method,
        path: a.path,
        headers: a.headers,
        agent,
        timeout: 30_000,
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          body += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
        res.on("error", (e) => resolve({ error: (e as NodeJS.ErrnoException).code ?? e.message }));
      },
    );
    req.on("timeout", () => req.destroy(new Error("TIMEOUT")));
    req.on("error", (e) => resolve({ error: (e as NodeJS.ErrnoException).code ?? e.message }));
    req.end(a.body);
  });
}

/** The answer's label (`202`, `410 SOLD_OUT`, `ERR ECONNRESET`) and the order a 2xx names. */
export function outcomeOf(answer: Answer): { label: string; order?: { id: string; quantity: number } } {
  if ("error" in answer) return { label: `ERR ${answer.error}` };
  let parsed: { orderId?: unknown; quantity?: unknown; error?: { code?: unknown } } = {};
  try {
    parsed = JSON.parse(answer.body);
  } catch {
    parsed = {};
  }
  if (answer.status < 300) {
    const order =
      typeof parsed.orderId === "string" || typeof parsed.orderId === "number"
        ? { id: String(parsed.orderId), quantity: Number(parsed.quantity ?? 1) }
        : undefined;
    return { label: String(answer.status), ...(order ? { order } : {}) };
  }
  return { label: `${answer.status} ${String(parsed.error?.code ?? "")}`.trim() };
}

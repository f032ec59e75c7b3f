/**
 * The sale's opening crowd in one instant: a new sale, then 50 buys started together (one connection
 * each, opened beforehand) into an isolate that has not loaded the catalog since the sale was created.
 * Every answer must be 202, 409 or 410: a 5xx means a request waited on another request's I/O (workerd
 * cancels such requests). Light: 50 requests, run before the warm-up.
 */
import { Agent } from "undici";
import type { operator } from "../clients/admin";
import { shopperToken } from "../clients/jwt";
import { clientIp } from "../clients/scenario";
import type { Check, ColdBurstResult } from "../measure/measures";
import type { WorkersBench } from "./workers-bench";

const SHOPPERS = 50;

export async function coldBurst(
  workerUrl: string,
  op: ReturnType<typeof operator>,
  opts: { jwtSecret: string; tag: string },
): Promise<{ result: ColdBurstResult; check: Check }> {
  const sale = await op.createSale(`cold-burst-${opts.tag}`, 20, 1);
  const tokens = Array.from({ length: SHOPPERS }, (_, i) =>
    shopperToken(opts.jwtSecret, `cb-${opts.tag}-${i}`),
  );
  const dispatcher = new Agent({ connections: SHOPPERS, pipelining: 0 });
  const byStatus: Record<string, number> = {};
  try {
    await Promise.all(tokens.map(() => fetch(`${workerUrl}/api/health`, { dispatcher } as RequestInit)));
    const statuses = await Promise.all(
      tokens.map(async (token, i) => {
        const res = await fetch(`${workerUrl}/api/buy/${sale.productToken}`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${token}`,
            "content-type": "application/json",
            "cf-connecting-ip": clientIp(i),
          },
          body: JSON.stringify({ quantity: 1 }),
          dispatcher,
        } as RequestInit).catch(() => null);
        await res?.text();
        return res ? String(res.status) : "no answer";
      }),
    );
    for (const s of statuses) byStatus[s] = (byStatus[s] ?? 0) + 1;
  } finally {
    await dispatcher.close();
  }
  const serverErrors = Object.entries(byStatus)
    .filter(([s]) => !/^[234]\d\d$/.test(s))
    .reduce((n, [, c]) => n + c, 0);
  return {
    result: { shoppers: SHOPPERS, byStatus, serverErrors },
    check: {
      name: "cold burst: 50 simultaneous buys into a cold catalog, no 5xx",
      ok: serverErrors === 0,
      detail: JSON.stringify(byStatus),
    },
  };
}

/** The worker's bench, before its warm-up: the cold burst, its status counts logged. */
export async function coldBurstPhase(
  bench: WorkersBench,
): Promise<{ result: ColdBurstResult; check: Check }> {
  const { env, op, run, log } = bench;
  const cold = await coldBurst(env.workerUrl, op, { jwtSecret: env.jwtSecret, tag: run });
  log(
    `cold burst: 50 simultaneous buys on a new sale: ${JSON.stringify(cold.result.byStatus)}, ${cold.result.serverErrors} 5xx`,
  );
  return cold;
}

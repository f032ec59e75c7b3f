import { ADMIN_TOKEN, shopperToken } from "../../test/support/shopper";
import type { Scenario, ScenarioContext } from "../scenario";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The stream budgets under attack, small so that a few hundred connections spend them. */
const vars = {
  REALTIME_MAX_STREAMS: "40",
  REALTIME_MAX_STREAMS_PER_IP: "6",
  REALTIME_MAX_ORDER_STREAMS: "30",
  REALTIME_MAX_STREAMS_PER_USER: "2",
};

const ADDRESSES = 12;
const ATTEMPTS_PER_ADDRESS = 12;

type Opened = { status: number; retryAfter: string | null; close(): void };

/** Opens an event stream and reads its first bytes (or the error answer); `close()` leaves. */
async function openStream(url: string, headers: Record<string, string>): Promise<Opened> {
  const controller = new AbortController();
  try {
    const res = await fetch(url, {
      headers: { Accept: "text/event-stream", ...headers },
      signal: AbortSignal.any([controller.signal, AbortSignal.timeout(60_000)]),
    });
    const opened = {
      status: res.status,
      retryAfter: res.headers.get("Retry-After"),
      close: () => controller.abort(),
    };
    if (res.status !== 200) {
      await res.text();
      return opened;
    }
    const reader = res.body?.getReader();
    await reader?.read();
    void (async () => {
      while (reader && !(await reader.read().catch(() => ({ done: true }))).done);
    })();
    return opened;
  } catch {
    controller.abort();
    return { status: 0, retryAfter: null, close: () => {} };
  }
}

/**
 * Anonymous clients from 12 addresses each try to hold 12 sale streams (topping up every 1.5 s, a third
 * of them leaving and coming back) while shoppers buy, pay and cancel. The budgets must hold: at most REALTIME_MAX_STREAMS_PER_IP
 * per address and REALTIME_MAX_STREAMS in all, every refusal a 503 with Retry-After; and whatever the
 * attackers hold, a buyer's order stream and the operator's stream are served. The checker then finds
 * nothing lost, oversold or duplicated.
 */
export const slotExhaustion: Scenario = {
  name: "slot-exhaustion",
  title: "Anonymous clients try to take every stream slot during a buy burst",
  vars,
  sale: (size) => ({ stock: size === "ci" ? 150 : 400 }),
  async run(ctx) {
    const url = `${ctx.app.worker.url}/api/sales/${ctx.sale.saleId}/events`;
    const held: Opened[] = [];
    const answers = new Map<string, number>();
    let stop = false;
    const attacker = async (address: number) => {
      const headers = { "CF-Connecting-IP": `198.18.0.${address}` };
      let mine: Opened[] = [];
      for (let round = 0; !stop; round++) {
        const want = ATTEMPTS_PER_ADDRESS - mine.length;
        const tries = await Promise.all(Array.from({ length: want }, () => openStream(url, headers)));
        for (const t of tries) {
          const key = `${t.status}${t.status === 503 && !t.retryAfter ? " without Retry-After" : ""}`;
          answers.set(key, (answers.get(key) ?? 0) + 1);
          if (t.status === 200) mine.push(t);
        }
        held.push(...tries.filter((t) => t.status === 200));
        if (mine.length > Number(vars.REALTIME_MAX_STREAMS_PER_IP))
          ctx.violation(`address 198.18.0.${address} held ${mine.length} sale streams at once`);
        await sleep(1_500);
        if (address % 3 === 0 && round % 2 === 1) {
          for (const t of mine) t.close(); // some churn: leave and come back
          mine = [];
        }
      }
    };
    const attackers = Array.from({ length: ADDRESSES }, (_, i) => attacker(i + 1));
    await sleep(1_000);
    ctx.fault(
      `${ADDRESSES} anonymous addresses × ${ATTEMPTS_PER_ADDRESS} sale streams each (budgets: ${vars.REALTIME_MAX_STREAMS} in all, ${vars.REALTIME_MAX_STREAMS_PER_IP} per address), kept open or reconnecting, during the workload`,
    );
    const served = await Promise.all([
      ctx.workload({ durationMs: ctx.ms(6_000, 20_000), payRate: 0.4, cancelRate: 0.2 }),
      probeProtectedStreams(ctx),
    ]).then(([, probes]) => probes);
    stop = true;
    await Promise.all(attackers);
    for (const t of held) t.close();
    ctx.fault(
      `stream answers to the attackers ${JSON.stringify(Object.fromEntries(answers))}; buyers' order streams and the operator's served ${served.ok}/${served.tries}`,
    );
    if ((answers.get("503 without Retry-After") ?? 0) > 0)
      ctx.violation("a refused stream had no Retry-After");
  },
};

/** While the attack runs: a buyer opens its order's stream and the operator opens the sale's, every second. */
async function probeProtectedStreams(ctx: ScenarioContext): Promise<{ ok: number; tries: number }> {
  let ok = 0;
  let tries = 0;
  const rounds = ctx.size === "ci" ? 4 : 12;
  for (let i = 0; i < rounds; i++) {
    await sleep(1_000);
    const buyer = `probe-${i}`;
    const buy = await ctx.client.buy(ctx.sale.productToken, buyer, 1);
    const streams: [string, Record<string, string>][] = [
      [`/api/admin/sales/${ctx.sale.saleId}/events`, { Authorization: `Bearer ${ADMIN_TOKEN}` }],
    ];
    if (buy.orderId)
      streams.push([
        `/api/orders/${buy.orderId}/events`,
        { Authorization: `Bearer ${await shopperToken(buyer)}`, "CF-Connecting-IP": "198.18.0.1" },
      ]);
    for (const [path, headers] of streams) {
      tries++;
      const s = await openStream(`${ctx.app.worker.url}${path}`, headers);
      if (s.status === 200) ok++;
      else ctx.violation(`${path.split("/").slice(0, 3).join("/")}… answered ${s.status} during the attack`);
      s.close();
    }
  }
  return { ok, tries };
}

import { startTlsProxy, type TlsProxy, throwawayCertificate, trustingFetch } from "../../local/tls-proxy";
import { startApp } from "../../test/support/app";
import { type Scenario, type ScenarioContext, serverRuntime } from "../scenario";

const SHOPPERS = 40;
let proxy: TlsProxy | null = null;

/**
 * The server deployed as the README says: Bun (or FLASH_RUNTIME=deno) behind a TLS-terminating proxy
 * that forwards plain HTTP with X-Forwarded-For, PUBLIC_URL its https URL, TRUST_PROXY_HEADER set.
 * Shoppers, QStash's deliveries and failure callbacks all come through the proxy (QStash signs the
 * https URL; the engine sees http). Bursts of simultaneous buys alternate with the workload; every
 * delivery must be accepted, every acknowledged order written.
 */
export const behindTlsProxy: Scenario = {
  name: "proxy",
  title: "Server behind a TLS-terminating proxy: bursts of buys, every job delivered over https",
  sale: (size) => ({ stock: size === "ci" ? 100 : 300 }),
  // 40 TLS handshakes at once into a cold process on a shared 2-core box: answers, not latency, count here
  clientTimeoutMs: 10_000,
  async start(vars) {
    const cert = throwawayCertificate();
    const https = trustingFetch(cert.cert);
    const tls = await startTlsProxy({ cert });
    proxy = tls;
    try {
      const app = await startApp({
        runtime: serverRuntime(),
        vars: { ...vars, TRUST_PROXY_HEADER: "X-Forwarded-For" },
        publicUrl: tls.url,
        qstashFetch: https,
      });
      tls.setTarget(app.worker.url);
      const stopApp = app.stop;
      app.stop = async () => {
        await stopApp();
        await tls.close();
      };
      return { app, shop: { url: tls.url, fetch: https } };
    } catch (error) {
      await tls.close();
      throw error;
    }
  },
  async run(ctx) {
    const rounds = ctx.size === "ci" ? 2 : 4;
    for (let round = 0; round < rounds; round++) {
      await burst(ctx, round);
      await ctx.workload({ durationMs: ctx.ms(2_000, 5_000), userPrefix: `w${round}-` });
    }
    await ctx.app.drain(10_000).catch(() => undefined);
    const { qstash } = ctx.app.stack;
    const refused = qstash.dlq().filter((d) => d.responseStatus === 401).length;
    if (refused > 0) ctx.violation(`${refused} QStash messages dead-lettered after 401 answers`);
    ctx.fault(
      `${ctx.app.runtime} behind https://: ${proxy?.forwarded()} requests through the proxy; ` +
        `${qstash.delivered.delivered} deliveries accepted, ${qstash.delivered.retries} retried, ` +
        `${qstash.dlq().length} dead-lettered (${refused} after a 401)`,
    );
  },
};

/** `SHOPPERS` buys in the same instant through the proxy: none may be a 5xx or go unanswered. */
async function burst(ctx: ScenarioContext, round: number): Promise<void> {
  const ops = await Promise.all(
    Array.from({ length: SHOPPERS }, (_, i) =>
      ctx.client.buy(ctx.sale.productToken, `burst-${round}-${i}`, 1 + (i % 2), `burst-${round}-${i}`),
    ),
  );
  const counts = new Map<string, number>();
  for (const op of ops) {
    const key = String(op.status ?? op.note ?? "none");
    counts.set(key, (counts.get(key) ?? 0) + 1);
    if (op.status === undefined || op.status >= 500)
      ctx.violation(`burst ${round}: ${op.userId} answered ${op.status ?? op.note}`);
  }
  ctx.log(`burst ${round}: ${[...counts].map(([s, n]) => `${n}×${s}`).join(", ")}`);
}

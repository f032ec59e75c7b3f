import { ADMIN_TOKEN } from "../../test/support/shopper";
import type { Scenario, ScenarioContext } from "../scenario";
import { scriptOnlyReservations } from "../script-reservations";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * An operator rebuilds a sale on a live Redis (`POST /api/admin/sales/:saleId/rebuild`) while the
 * outbox holds orders Postgres has never seen: reservations made by the script alone (the 202 went out,
 * the isolate died before publishing) and reservations whose writes QStash is holding (delivery paused
 * around each rebuild), under the workload, so reservations and cancels also run during the rebuild.
 * The rebuild must keep, count and republish every one: none may become 404, and none of their units
 * may be sold again.
 */
export const rebuildWithUnpublished: Scenario = {
  name: "rebuild-with-unpublished",
  title: "Operator rebuilds on a live Redis with unpublished orders in the outbox",
  vars: { RECOVERY_QUIET_SECONDS: "1" },
  sale: (size) => ({ stock: size === "ci" ? 60 : 200 }),
  async run(ctx) {
    const durationMs = ctx.ms(8_000, 20_000);
    const rebuilds = ctx.size === "ci" ? 2 : 4;
    const [, unpublished] = await Promise.all([
      ctx.workload({ durationMs }),
      scriptOnlyReservations(ctx, {
        seed: 11,
        keyPrefix: "unpublished-",
        durationMs,
        pause: { baseMs: 80, spreadMs: 160 },
        reserved: () => ({ outcome: "ok", status: 202, note: "never published" }),
      }),
      (async () => {
        for (let i = 0; i < rebuilds; i++) {
          await sleep(durationMs / (rebuilds + 1));
          await rebuildWhileHeld(ctx);
        }
      })(),
    ]);
    ctx.fault(`${unpublished} reservations made by the script alone, never published`);
  },
};

async function rebuildWhileHeld(ctx: ScenarioContext): Promise<void> {
  const { app, sale } = ctx;
  app.stack.qstash.pause();
  await sleep(600);
  const res = await fetch(`${app.worker.url}/api/admin/sales/${sale.saleId}/rebuild`, {
    method: "POST",
    headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  const body = await res.text();
  app.stack.qstash.resume();
  if (res.status !== 200) {
    ctx.violation(`rebuild route answered ${res.status} ${body.slice(0, 200)}`);
    return;
  }
  const report = JSON.parse(body) as { keptOrders?: number; liveOrders?: number };
  ctx.fault(
    `operator rebuild with QStash delivery held: ${report.liveOrders} orders from Postgres, ${report.keptOrders} kept from the outbox`,
  );
}

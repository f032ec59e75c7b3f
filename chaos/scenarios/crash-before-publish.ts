import { newOrderId } from "../../src/ids";
import { reserve } from "../../test/support/lua";
import type { Scenario } from "../scenario";
import { random } from "../workload";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The worker killed between the reservation and the publish: beside the workload, reservations are made
 * by the reservation script alone (exactly what a worker does before it dies: the script ran, no job
 * was ever published). Half of them count as acknowledged (the 202 went out, the isolate died in
 * `waitUntil`), half as unknown (the connection dropped). The Cron sweeper must publish every one.
 */
export const crashBeforePublish: Scenario = {
  name: "crash-before-publish",
  title: "Worker killed between the reservation and the publish",
  sale: (size) => ({ stock: size === "ci" ? 60 : 200 }),
  async run(ctx) {
    const { app, sale, history } = ctx;
    const rnd = random(7);
    const durationMs = ctx.ms(6_000, 18_000);
    let orphans = 0;
    const crashes = async () => {
      const until = Date.now() + durationMs;
      for (let i = 0; Date.now() < until; i++) {
        const userId = `u${Math.floor(rnd() * (ctx.size === "ci" ? 40 : 150))}`;
        const quantity = rnd() < 0.7 ? 1 : 2;
        const idempotencyKey = `crash-${i}`;
        const orderId = newOrderId(sale.saleId);
        const op = history.invoke({ kind: "buy", userId, quantity, idempotencyKey, orderId, via: "script" });
        try {
          const reply = await reserve(app.redis, sale.saleId, {
            orderId,
            userId,
            quantity,
            now: Date.now(),
            idem: idempotencyKey,
          });
          const reserved = Number(reply[0]) === 1;
          if (reserved) orphans++;
          history.complete(
            op,
            reserved
              ? {
                  outcome: i % 2 === 0 ? "ok" : "unknown",
                  status: i % 2 === 0 ? 202 : 0,
                  note: "worker died before publishing",
                }
              : { outcome: "failed", status: 409, code: `script ${reply[0]}` },
          );
        } catch (error) {
          history.complete(op, { outcome: "unknown", note: String(error) });
        }
        await sleep(60 + rnd() * 140);
      }
    };
    await Promise.all([ctx.workload({ durationMs }), crashes()]);
    ctx.fault(`${orphans} reservations made by the script alone, never published`);
  },
};

import type { Scenario } from "../scenario";
import { scriptOnlyReservations } from "../script-reservations";

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
    const durationMs = ctx.ms(6_000, 18_000);
    const [, orphans] = await Promise.all([
      ctx.workload({ durationMs }),
      scriptOnlyReservations(ctx, {
        seed: 7,
        keyPrefix: "crash-",
        durationMs,
        pause: { baseMs: 60, spreadMs: 140 },
        reserved: (i) => ({
          outcome: i % 2 === 0 ? "ok" : "unknown",
          status: i % 2 === 0 ? 202 : 0,
          note: "worker died before publishing",
        }),
      }),
    ]);
    ctx.fault(`${orphans} reservations made by the script alone, never published`);
  },
};

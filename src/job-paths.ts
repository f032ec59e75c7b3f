/** Where the app mounts the job routes QStash delivers to (src/app.ts). */
export const JOBS_MOUNT = "/api/jobs";

/**
 * The one table of the engine's jobs: each job's route under {@link JOBS_MOUNT}. The routes mount
 * them (src/routes/jobs.ts, src/routes/webhook-jobs.ts); the publishers hand QStash {@link jobUrl}
 * (src/orders/enqueue-order.ts, src/webhooks/publish.ts, src/orders/dead-letter-replay.ts).
 */
export const JOB_ROUTES = {
  orderWrite: "/order-write",
  paymentTimeout: "/payment-timeout",
  voidReservation: "/void-reservation",
  /** QStash's failure callback: a job it gave up on */
  failed: "/failed",
  webhookDelivery: "/webhook-delivery",
} as const;

export type Job = keyof typeof JOB_ROUTES;

/**
 * The URL a job is published to: PUBLIC_URL, the mount and the job's route.
 *
 * @example
 * await qstash.publishJSON({ url: jobUrl(config.PUBLIC_URL, "orderWrite"), body });
 */
export function jobUrl(publicUrl: string, job: Job): string {
  return `${publicUrl}${JOBS_MOUNT}${JOB_ROUTES[job]}`;
}

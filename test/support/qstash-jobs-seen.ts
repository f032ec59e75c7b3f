/**
 * What the QStash stand-in delivered to the engine, seen through the `fetch` it is given
 * (`appForFile({ qstashFetch: jobs.fetch })`): deliveries counted by job route, and the webhook
 * delivery jobs' bodies kept (to tell which sale's or endpoint's events went through QStash).
 *
 * @example
 * const jobs = qstashJobsSeen();
 * const app = appForFile({ qstashFetch: jobs.fetch });
 * jobs.count("/api/jobs/order-write"); // order-write deliveries so far
 */
export function qstashJobsSeen() {
  const counts = new Map<string, number>();
  const webhookJobBodies: string[] = [];
  const seeing: typeof fetch = (input, init) => {
    const path = new URL(input instanceof Request ? input.url : String(input)).pathname;
    counts.set(path, (counts.get(path) ?? 0) + 1);
    const body = init?.body;
    if (path === "/api/jobs/webhook-delivery" && body instanceof Uint8Array)
      webhookJobBodies.push(new TextDecoder().decode(body));
    return fetch(input, init);
  };
  return {
    fetch: seeing,
    count: (path: string) => counts.get(path) ?? 0,
    webhookJobBodies,
    clear() {
      counts.clear();
    },
  };
}

import type { Defer } from "../services";

/** The background work a server process holds: tracked until it settles, drained before exit. */
export type TaskSet = {
  defer: Defer;
  /** Tasks still running. */
  size(): number;
  /** Resolves once every task deferred so far, and every task those defer meanwhile, has settled. */
  drain(): Promise<void>;
};

/**
 * The task runner of a server runtime (Deno, Bun), where there is no `waitUntil`: each deferred task is
 * kept until it settles, so a shutdown can wait for pending publishes instead of dropping them.
 *
 * @example
 * const tasks = createTaskSet();
 * tasks.defer(publish());
 * await tasks.drain(); // on SIGTERM, before exit
 */
export function createTaskSet(): TaskSet {
  const running = new Set<Promise<unknown>>();
  return {
    defer(task) {
      const tracked = task.then(
        () => undefined,
        (error) => console.error("background", error),
      );
      running.add(tracked);
      void tracked.finally(() => running.delete(tracked));
    },
    size: () => running.size,
    async drain() {
      while (running.size > 0) await Promise.allSettled([...running]);
    },
  };
}

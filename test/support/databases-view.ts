import { Redis } from "ioredis";
import { storeIndexOf } from "../../src/stores/sharded-store";

/** Commands whose first argument is not a key: they go to every database (or are not routed at all). */
const EVERYWHERE = new Set(["disconnect", "quit"]);
/** Commands whose keys follow a script and a count: routed by their first key. */
const SCRIPTED = new Set(["eval", "evalsha", "evalBuffer", "evalshaBuffer"]);

/**
 * A test's view of several Redis databases placed as the engine places keys over several Upstash
 * databases (`storeIndexOf`, src/stores/sharded-store.ts): a command goes to the database owning its
 * first key (a script's: the first after its text and count); a MULTI or pipeline to the database of its first command's key (a test's transaction
 * names one sale's keys, which live together). It answers `isCluster` and `nodes("master")` as an ioredis
 * `Cluster` does, so snapshots and command counts (test/support/redis-inspect.ts) read every database.
 * Typed as a `Redis`: tests use it as they use the one server's client.
 *
 * @example
 * const redis = databasesView(["redis://127.0.0.1:6379", "redis://127.0.0.1:6380"]);
 * await redis.hget(saleKeys(saleId).meta, "epoch"); // asked of the database holding the sale
 */
export function databasesView(urls: string[]): Redis {
  const clients = urls.map((url) => new Redis(url, { maxRetriesPerRequest: 1 }));
  const at = (key: unknown) => clients[storeIndexOf(String(key), clients.length)] as Redis;
  // a script's first key follows its text (or SHA) and the number of keys
  const keyOf = (name: string, args: unknown[]) => (SCRIPTED.has(name) ? args[2] : args[0]);
  const batch = (kind: "multi" | "pipeline") => {
    const queued: [string, unknown[]][] = [];
    const recorder: Record<string, unknown> = new Proxy(
      {},
      {
        get: (_, name: string) => {
          if (name === "exec")
            return async () => {
              const [first, args] = queued[0] ?? ["", []];
              const target = at(keyOf(first, args));
              let run = target[kind]() as unknown as Record<string, (...a: unknown[]) => unknown>;
              for (const [method, args] of queued) run = run[method]?.(...args) as typeof run;
              return (run as unknown as { exec(): Promise<unknown> }).exec();
            };
          return (...args: unknown[]) => {
            queued.push([name, args]);
            return recorder;
          };
        },
      },
    );
    return recorder;
  };
  return new Proxy({} as Redis, {
    get: (_, name: string) => {
      if (name === "isCluster") return true;
      if (name === "nodes") return () => clients;
      if (name === "multi" || name === "pipeline") return () => batch(name);
      if (EVERYWHERE.has(name))
        return (...args: unknown[]) =>
          Promise.all(
            clients.map((c) =>
              (c as unknown as Record<string, (...a: unknown[]) => unknown>)[name]?.(...args),
            ),
          );
      return (...args: unknown[]) => {
        const client = at(keyOf(name, args)) as unknown as Record<string, (...a: unknown[]) => unknown>;
        const method = client[name];
        if (typeof method !== "function") throw new Error(`databasesView: no method ${name}`);
        return method.apply(client, args);
      };
    },
  });
}

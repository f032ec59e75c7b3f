/**
 * A real Redis Cluster of private `redis-server`s (Debian's package) for the local stack and the tests:
 * `masters` masters, each with `replicas` replicas, made by `redis-cli --cluster create` and ready once
 * every node reports `cluster_state:ok` and every replica has finished its first sync. Nodes keep nothing
 * on disk, like {@link startRedis}'s server.
 *
 * @example
 * const cluster = await startRedisCluster({ masters: 3 });
 * // REDIS_CLUSTER_NODES=cluster.urls.join(",")
 * await cluster.stop();
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { freePort, LOOPBACK, waitFor } from "./ports";
import { type RedisProcess, startRedis } from "./redis-process";

const run = promisify(execFile);

export type RedisCluster = {
  /** Every node, masters first as `redis-cli` was given them. */
  nodes: RedisProcess[];
  /** The seed URLs (every node). */
  urls: string[];
  stop(): Promise<void>;
};

/** Starts the nodes, joins them into one cluster and waits until it serves every slot. */
export async function startRedisCluster(
  options: { masters?: number; replicas?: number; dir?: string } = {},
): Promise<RedisCluster> {
  const masters = options.masters ?? 3;
  const replicas = options.replicas ?? 0;
  const ownDir = options.dir === undefined;
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), "flashsale-cluster-")));
  const nodes: RedisProcess[] = [];
  const stop = async () => {
    await Promise.all(nodes.map((n) => n.stop().catch(() => undefined)));
    if (ownDir) await rm(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < masters * (1 + replicas); i++) {
      nodes.push(
        await startRedis({
          dir: join(dir, `node-${i}`),
          args: [
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            "nodes.conf",
            "--cluster-node-timeout",
            "2000",
            // the bus on a free port of its own: by default it is the data port + 10,000, which another
            // process may hold, or past 65,535 for a data port above 55,535 (the node then exits)
            "--cluster-port",
            String(await freePort()),
            // a replica's first sync starts at once (the default waits 5 s for more replicas to join it)
            "--repl-diskless-sync-delay",
            "0",
          ],
        }),
      );
    }
    const cli = process.env.REDIS_CLI_BIN ?? "/usr/bin/redis-cli";
    const addresses = nodes.map((n) => `${LOOPBACK}:${n.port}`);
    await run(cli, [
      "--cluster",
      "create",
      ...addresses,
      "--cluster-replicas",
      String(replicas),
      "--cluster-yes",
    ]);
    // ready once every node serves every slot, and every replica has done its first sync and is known to
    // every node as one: only then does it count (WAIT, a failover)
    const ask = (port: number, ...args: string[]) =>
      run(cli, ["-p", String(port), ...args]).then((r) => r.stdout);
    const masterPorts = nodes.slice(0, masters).map((n) => n.port);
    await waitFor(
      async () => {
        const states = await Promise.all(nodes.map((n) => ask(n.port, "cluster", "info")));
        const syncs = await Promise.all(masterPorts.map((port) => ask(port, "info", "replication")));
        const views = await Promise.all(nodes.map((n) => ask(n.port, "cluster", "nodes")));
        return (
          states.every((info) => info.includes("cluster_state:ok")) &&
          syncs.every((info) => (info.match(/^slave\d+:.*state=online/gm) ?? []).length === replicas) &&
          views.every((view) => (view.match(/[ ,]slave[ ,]/g) ?? []).length === masters * replicas)
        );
      },
      {
        timeoutMs: 30_000,
        intervalMs: 200,
        what: "the Redis Cluster serving every slot, its replicas in sync",
      },
    );
    return { nodes, urls: nodes.map((n) => n.url), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

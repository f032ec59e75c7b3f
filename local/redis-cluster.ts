/**
 * A real Redis Cluster of private `redis-server`s (Debian's package) for the local stack and the tests:
 * `masters` masters, each with `replicas` replicas, made by `redis-cli --cluster create` and ready once
 * every node reports `cluster_state:ok`. Nodes keep nothing on disk, like {@link startRedis}'s server.
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
import { LOOPBACK, waitFor } from "./ports";
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
    await waitFor(
      async () => {
        const infos = await Promise.all(
          nodes.map((n) => run(cli, ["-p", String(n.port), "cluster", "info"]).then((r) => r.stdout)),
        );
        return infos.every((info) => info.includes("cluster_state:ok"));
      },
      { timeoutMs: 30_000, intervalMs: 200, what: "the Redis Cluster's state ok" },
    );
    return { nodes, urls: nodes.map((n) => n.url), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

import { Cluster } from "ioredis";
import type { RedisCluster } from "../../local/redis-cluster";
import type { RedisProcess } from "../../local/redis-process";

/** A direct client of the cluster, for inspection, seeded with every node still running. */
export function clusterAdmin(cluster: RedisCluster | undefined): Cluster {
  return new Cluster(
    (cluster?.nodes ?? []).map((n) => ({ host: "127.0.0.1", port: n.port })),
    { clusterRetryStrategy: () => 200 },
  );
}

/**
 * The processes of the master that holds `key` and of its replica, if any (CLUSTER KEYSLOT, CLUSTER
 * NODES: CLUSTER SLOTS leaves out a replica whose replication offset is still 0).
 */
export async function homeOf(
  cluster: RedisCluster | undefined,
  key: string,
): Promise<{ master: RedisProcess; replica?: RedisProcess }> {
  const admin = clusterAdmin(cluster);
  try {
    const slot = Number(await admin.call("CLUSTER", "KEYSLOT", key));
    const lines = String(await admin.call("CLUSTER", "NODES"))
      .trim()
      .split("\n")
      .map((line) => line.split(" "));
    const serves = (ranges: string[]) =>
      ranges.some((range) => {
        const [from, to = from] = range.split("-").map(Number);
        return slot >= (from ?? -1) && slot <= (to ?? -1);
      });
    const master = lines.find(
      (l) => /(^|,)master(,|$)/.test(l[2] ?? "") && !l[2]?.includes("fail") && serves(l.slice(8)),
    );
    const replica = lines.find((l) => l[3] === master?.[0] && !l[2]?.includes("fail"));
    const node = (line: string[] | undefined) =>
      cluster?.nodes.find((n) => n.port === Number(line?.[1]?.split("@")[0]?.split(":").pop()));
    const found = node(master);
    if (!found) throw new Error(`no master for slot ${slot}`);
    const copy = node(replica);
    return copy ? { master: found, replica: copy } : { master: found };
  } finally {
    admin.disconnect();
  }
}

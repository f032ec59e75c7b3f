/**
 * A TCP proxy in front of a store (redis-server, Postgres) that can go silent without closing anything:
 * the half-open connections a client meets when its peer vanishes behind a load balancer, a NAT or a
 * proxy that keeps the client's side alive. No RST, no FIN: only silence.
 *
 * - `stall("drop")`: every open connection turns into a black hole for good (what it receives is read
 *   and thrown away, nothing comes back, its upstream connection is gone), and so does every connection
 *   opened until `resume()`: the peer is gone and the proxy keeps answering TCP for it.
 * - `stall("hold")`: nothing is read any more on either side (TCP back-pressure, nothing lost);
 *   `resume()` lets everything held through: a partition that heals, late replies included.
 * - `resume()`: new connections are forwarded again, and held ones flow; black holes stay silent until
 *   their client gives up on them.
 *
 * @example
 * const proxy = await startStallProxy({ target: stack.redis.url });
 * const engine = await startServer({ runtime: "bun", vars: { REDIS_URL: proxy.via(stack.redis.url) } });
 * proxy.stall("drop"); … proxy.resume();
 */
import { connect, createServer, type Socket } from "node:net";
import { LOOPBACK, portOrFree } from "./ports";

export type StallMode = "drop" | "hold";

type Link = { client: Socket; upstream: Socket | null; dead: boolean };

export type StallProxy = {
  port: number;
  /** `url` with its host and port replaced by the proxy's (credentials, path and query kept). */
  via(url: string): string;
  stall(mode: StallMode): void;
  resume(): void;
  /** Connections open through the proxy, and how many of them are black holes. */
  connections(): { open: number; silent: number };
  close(): Promise<void>;
};

/** Starts the proxy on loopback in front of `target` (a URL naming host and port). */
export async function startStallProxy(options: { target: string; port?: number }): Promise<StallProxy> {
  const target = new URL(options.target);
  const links = new Set<Link>();
  let stalled: StallMode | null = null;

  const silence = (link: Link) => {
    link.dead = true;
    link.upstream?.destroy();
    link.client.resume();
  };
  const hold = (link: Link, held: boolean) => {
    for (const socket of [link.client, link.upstream]) held ? socket?.pause() : socket?.resume();
  };
  const pipe = (from: Socket, to: Socket, link: Link) => {
    from.on("data", (chunk: Buffer) => {
      if (link.dead) return;
      if (!to.write(chunk)) from.pause();
    });
    to.on("drain", () => stalled !== "hold" && !link.dead && from.resume());
  };

  const server = createServer((client) => {
    const link: Link = { client, upstream: null, dead: false };
    links.add(link);
    client.on("error", () => {});
    client.on("close", () => {
      links.delete(link);
      link.upstream?.destroy();
    });
    if (stalled === "drop") {
      client.on("data", () => {});
      return silence(link);
    }
    const upstream = connect(Number(target.port), target.hostname);
    link.upstream = upstream;
    upstream.on("error", () => {});
    upstream.on("close", () => link.dead || client.destroy());
    pipe(client, upstream, link);
    pipe(upstream, client, link);
    if (stalled === "hold") hold(link, true);
  });
  const port = await portOrFree(options.port);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, LOOPBACK, () => resolve());
  });

  return {
    port,
    via(url) {
      const u = new URL(url);
      u.hostname = LOOPBACK;
      u.port = String(port);
      return u.toString();
    },
    stall(mode) {
      stalled = mode;
      for (const link of links) {
        if (link.dead) continue;
        if (mode === "drop") silence(link);
        else hold(link, true);
      }
    },
    resume() {
      const was = stalled;
      stalled = null;
      if (was === "hold") for (const link of links) if (!link.dead) hold(link, false);
    },
    connections: () => ({ open: links.size, silent: [...links].filter((l) => l.dead).length }),
    async close() {
      for (const link of links) {
        link.client.destroy();
        link.upstream?.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

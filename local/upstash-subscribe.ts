/**
 * Upstash's pub/sub over REST (https://upstash.com/docs/redis/sdks/ts/pubsub): `POST /subscribe/<channel>`
 * and `POST /psubscribe/<pattern>` answer Server-Sent Events, as `@upstash/redis` 1.39's `Subscriber`
 * reads them (`pkg/commands/subscribe.ts`: one `data:` line per event, fields split at the first commas):
 *
 * - `data: subscribe,<channel>,<count>` (`psubscribe,<pattern>,<count>`) once the subscription holds;
 * - `data: message,<channel>,<message>` and `data: pmessage,<pattern>,<channel>,<message>` for each
 *   PUBLISH, the message as its UTF-8 text (a message with line breaks becomes several `data:` lines, as
 *   the SSE format carries them; the Upstash client reads only the first).
 *
 * Each request runs a real SUBSCRIBE (PSUBSCRIBE) on a connection of its own; several path segments
 * subscribe to several channels. When the client disconnects the connection is closed, which ends the
 * subscription in Redis (PUBSUB NUMSUB drops); when Redis goes away the stream ends. Redis unreachable at
 * the start: 503 `{"error"}`, as for any command.
 *
 * @example
 * app.post("/subscribe/*", subscribeHandler(conns, "subscribe"));
 * const subscriber = redis.subscribe("orders"); // from "@upstash/redis", against the stand-in
 */
import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { Redis } from "ioredis";
import type { OnNode } from "./hono-on-node";
import type { RedisConnections } from "./redis-connections";
import { failure } from "./upstash-run";

type Kind = "subscribe" | "psubscribe";

/** The Hono handler for `POST /<kind>/<name>[/<name>…]`. */
export function subscribeHandler(conns: RedisConnections, kind: Kind) {
  return async (c: Context<OnNode>) => {
    const names = new URL(c.req.url).pathname.split("/").slice(2).filter(Boolean).map(decodeURIComponent);
    if (names.length === 0)
      return c.json({ error: `ERR wrong number of arguments for '${kind}' command` }, 400);
    const queued: string[] = [];
    let emit = (data: string): void => {
      queued.push(data);
    };
    let conn: Redis | undefined;
    const counts: number[] = [];
    try {
      conn = await conns.dedicated();
      listen(conn, kind, (data) => emit(data));
      for (const name of names)
        counts.push(Number(kind === "subscribe" ? await conn.subscribe(name) : await conn.psubscribe(name)));
    } catch (error) {
      conn?.disconnect();
      const { status, body } = failure(error);
      return c.json(body as object, status as ContentfulStatusCode);
    }
    const subscribed = conn;
    return streamSSE(c, async (stream) => {
      let written = Promise.resolve();
      const write = (data: string) => {
        written = written.then(() => stream.writeSSE({ data }));
      };
      for (const [i, name] of names.entries()) write(`${kind},${name},${counts[i]}`);
      for (const data of queued) write(data);
      emit = write;
      await new Promise<void>((resolve) => {
        stream.onAbort(resolve);
        c.env.gone.addEventListener("abort", () => resolve(), { once: true });
        subscribed.once("close", resolve);
      });
      subscribed.disconnect();
      await written;
    });
  };
}

/** Turns the connection's pub/sub deliveries into SSE data lines. */
function listen(conn: Redis, kind: Kind, emit: (data: string) => void): void {
  if (kind === "subscribe")
    conn.on("message", (channel: string, message: string) => emit(`message,${channel},${message}`));
  else
    conn.on("pmessage", (pattern: string, channel: string, message: string) =>
      emit(`pmessage,${pattern},${channel},${message}`),
    );
}

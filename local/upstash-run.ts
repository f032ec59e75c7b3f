/**
 * How the local Upstash REST stand-in runs commands on its redis-server and what it answers: a single
 * command, a pipeline (each command answered in its own slot) and a MULTI … EXEC transaction (on a
 * connection of its own; one refused command discards it whole). Blocking commands run on a dedicated
 * connection, dropped when they return or when the client goes away (`signal`). Replies are Upstash's
 * JSON values (`upstash-reply.ts`); a Redis error is a 400, Redis unreachable a 503.
 *
 * @example
 * const runner = createRunner(createRedisConnections({ redisUrl, shared: 4, exclusive: 4, timeoutMs }));
 * const { status, body } = await runner.single(["INCR", "n"], false, request.signal);
 */
import type { Redis } from "ioredis";
import { ReplyError } from "ioredis";
import { errorMessage as message } from "./http-util";
import { type RedisConnections, run } from "./redis-connections";
import { isBlocking } from "./upstash-commands";
import { reply } from "./upstash-reply";

/** An answer: its HTTP status and the JSON body (which may hold `Int`s, see `replyJson`). */
export type Reply = { status: number; body: unknown };

export function createRunner(conns: RedisConnections) {
  /** A connection of its own for a blocking command, dropped when done or when the client leaves. */
  const dedicated = async <T>(signal: AbortSignal, work: (conn: Redis) => Promise<T>): Promise<T> => {
    const conn = await conns.dedicated();
    const drop = () => conn.disconnect();
    signal.addEventListener("abort", drop, { once: true });
    try {
      return await work(conn);
    } finally {
      signal.removeEventListener("abort", drop);
      drop();
    }
  };

  return {
    async single(command: string[], base64: boolean, signal: AbortSignal): Promise<Reply> {
      try {
        const value = isBlocking(command)
          ? await dedicated(signal, (conn) => run(conn, command))
          : await run(conns.shared(), command);
        return { status: 200, body: { result: reply(value, base64) } };
      } catch (error) {
        return failure(error);
      }
    },

    /** Commands given as error texts (refused before running) are answered in their slot. */
    async pipeline(commands: Array<string[] | string>, base64: boolean, signal: AbortSignal): Promise<Reply> {
      const valid = commands.filter((c): c is string[] => typeof c !== "string");
      const runAll = (conn: Redis) => Promise.allSettled(valid.map((c) => run(conn, c)));
      let settled: PromiseSettledResult<unknown>[];
      try {
        settled = valid.some(isBlocking) ? await dedicated(signal, runAll) : await runAll(conns.shared());
      } catch (error) {
        return failure(error);
      }
      const down = settled.find((s) => s.status === "rejected" && !(s.reason instanceof ReplyError));
      if (down?.status === "rejected") return failure(down.reason);
      const results = settled.values();
      const body = commands.map((c) =>
        typeof c === "string"
          ? { error: c }
          : item(results.next().value as PromiseSettledResult<unknown>, base64),
      );
      return { status: 200, body };
    },

    async multiExec(commands: string[][], base64: boolean): Promise<Reply> {
      let conn: Redis;
      try {
        conn = await conns.borrow();
      } catch (error) {
        return failure(error);
      }
      let healthy = true;
      try {
        const queued = Promise.allSettled([["MULTI"], ...commands].map((c) => run(conn, c)));
        const exec = run(conn, ["EXEC"]);
        exec.catch(() => undefined);
        const refused = (await queued).find((s) => s.status === "rejected");
        if (refused?.status === "rejected" && refused.reason instanceof ReplyError) {
          await exec.catch(() => undefined);
          return badRequest(`EXECABORT Transaction discarded: ${message(refused.reason)}`);
        }
        const replies = await exec;
        if (!Array.isArray(replies)) return badRequest("EXECABORT Transaction discarded");
        return { status: 200, body: replies.map((r) => item(settle(r), base64)) };
      } catch (error) {
        healthy = error instanceof ReplyError;
        return failure(error);
      } finally {
        conns.giveBack(conn, healthy);
      }
    },
  };
}

/** A Redis error (the command's fault) is a 400; anything else means Redis is unreachable: 503. */
export function failure(error: unknown): Reply {
  if (error instanceof ReplyError) return { status: 400, body: { error: message(error) } };
  return { status: 503, body: { error: `ERR Redis unavailable: ${message(error)}` } };
}

export function badRequest(error: string): Reply {
  return { status: 400, body: { error } };
}

function settle(value: unknown): PromiseSettledResult<unknown> {
  return value instanceof Error ? { status: "rejected", reason: value } : { status: "fulfilled", value };
}

function item(s: PromiseSettledResult<unknown>, base64: boolean) {
  return s.status === "fulfilled" ? { result: reply(s.value, base64) } : { error: message(s.reason) };
}

/**
 * Which commands the local Upstash REST stand-in runs, and where: what Upstash's REST API refuses
 * (https://upstash.com/docs/redis/features/restapi, "REST - Redis API Compatibility": pub/sub other
 * than PUBLISH/PUBSUB, connection commands other than PING/ECHO, WATCH/UNWATCH/DISCARD, cluster), what
 * would take over a shared connection, and the blocking commands Upstash serves by holding the request
 * until the command returns (https://upstash.com/docs/redis/commands/list/blpop, "A blocking form holds
 * the request until data arrives or its timeout expires").
 *
 * @example
 * const command = toCommand(["XREAD", "BLOCK", "0", "STREAMS", "s", "$"]); // string[] or the error text
 * if (typeof command !== "string" && isBlocking(command)) { ... run it on a connection of its own ... }
 */

/** Commands the REST API does not run (each answered 400 with Redis' usual `ERR …` text). */
const REFUSED = new Set(
  [
    "SUBSCRIBE PSUBSCRIBE SSUBSCRIBE UNSUBSCRIBE PUNSUBSCRIBE SUNSUBSCRIBE MONITOR SELECT SWAPDB HELLO AUTH",
    "RESET QUIT SYNC PSYNC REPLCONF MULTI EXEC DISCARD WATCH UNWATCH CLIENT SHUTDOWN DEBUG WAIT WAITAOF",
  ]
    .join(" ")
    .split(" "),
);

/** Commands that always block until data arrives or their timeout expires. */
const BLOCKING = new Set("BLPOP BRPOP BRPOPLPUSH BLMOVE BLMPOP BZPOPMIN BZPOPMAX BZMPOP".split(" "));

/** A JSON command as strings, or the error text explaining why it is not one (or is refused). */
export function toCommand(value: unknown): string[] | string {
  if (!Array.isArray(value) || value.length === 0) return "ERR expected a command array";
  const args = value.map((v) =>
    typeof v === "string" ? v : typeof v === "number" || typeof v === "boolean" ? String(v) : null,
  );
  if (args.some((a) => a === null)) return "ERR command arguments must be strings or numbers";
  const name = (args[0] as string).toUpperCase();
  if (REFUSED.has(name)) return `ERR command '${name}' is not supported by the local Upstash REST server`;
  return args as string[];
}

/** True for a command that may wait in Redis (BLPOP …, XREAD/XREADGROUP with BLOCK). */
export function isBlocking([name = "", ...args]: string[]): boolean {
  const upper = name.toUpperCase();
  if (BLOCKING.has(upper)) return true;
  if (upper !== "XREAD" && upper !== "XREADGROUP") return false;
  const streams = args.findIndex((a) => a.toUpperCase() === "STREAMS");
  return args.slice(0, streams < 0 ? args.length : streams).some((a) => a.toUpperCase() === "BLOCK");
}

/**
 * What Redis did between two moments, from the redis-server itself (not the REST stand-in):
 * `INFO commandstats` (calls and µs per command) and `INFO cpu` (the server process's CPU time).
 *
 * Redis counts a command a script runs under that command's own name as well, and the script's µs
 * include them. So a delta has two parts: `scripts` (EVALSHA/EVAL: what a client sends, one round trip
 * each) and `other` (everything else: commands sent outside scripts plus those run inside scripts).
 * The bench's own INFO calls are left out.
 */
import { Redis } from "ioredis";

type CommandStat = { calls: number; usec: number };
export type RedisSnapshot = { commands: Record<string, CommandStat>; cpuMicros: number };
export type RedisDelta = {
  /** EVALSHA + EVAL calls, and their µs (which include the commands they run). */
  scripts: CommandStat;
  /** Every other command (outside or inside scripts), by name. */
  other: Record<string, CommandStat>;
  otherCalls: number;
  otherUsec: number;
  /** redis-server CPU (user + system) over the interval: execution plus networking and parsing. */
  cpuMicros: number;
};

const IGNORED = new Set(["info", "config|resetstat", "config|get", "ping", "client|setname", "hello"]);

export class RedisStats {
  private readonly conn: Redis;

  constructor(redisUrl: string) {
    this.conn = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  }

  async snapshot(): Promise<RedisSnapshot> {
    const text = await this.conn.info("everything");
    const commands: Record<string, CommandStat> = {};
    let user = 0;
    let sys = 0;
    for (const line of text.split("\r\n")) {
      const m = /^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/.exec(line);
      if (m) commands[m[1] as string] = { calls: Number(m[2]), usec: Number(m[3]) };
      const cpu = /^used_cpu_(user|sys):([\d.]+)$/.exec(line);
      if (cpu?.[1] === "user") user = Number(cpu[2]);
      if (cpu?.[1] === "sys") sys = Number(cpu[2]);
    }
    return { commands, cpuMicros: Math.round((user + sys) * 1e6) };
  }

  static delta(before: RedisSnapshot, after: RedisSnapshot): RedisDelta {
    const scripts = { calls: 0, usec: 0 };
    const other: Record<string, CommandStat> = {};
    let otherCalls = 0;
    let otherUsec = 0;
    for (const [name, now] of Object.entries(after.commands)) {
      if (IGNORED.has(name)) continue;
      const was = before.commands[name] ?? { calls: 0, usec: 0 };
      const d = { calls: now.calls - was.calls, usec: now.usec - was.usec };
      if (d.calls === 0) continue;
      if (name === "evalsha" || name === "eval") {
        scripts.calls += d.calls;
        scripts.usec += d.usec;
      } else {
        other[name] = d;
        otherCalls += d.calls;
        otherUsec += d.usec;
      }
    }
    return { scripts, other, otherCalls, otherUsec, cpuMicros: after.cpuMicros - before.cpuMicros };
  }

  /** A direct connection for the bench's own checks (stock, ledger) and the redis-benchmark setup. */
  get client(): Redis {
    return this.conn;
  }

  async close(): Promise<void> {
    this.conn.disconnect();
  }
}

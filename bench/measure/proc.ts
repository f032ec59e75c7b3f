/**
 * CPU time of processes from /proc (Linux): the workerd that serves the worker, the naive server,
 * redis-server and Postgres, in µs. A single process is read from its threads' `schedstat` (ns
 * resolution; threads are long-lived in workerd and Node); a process tree from `stat` (user + system
 * at the clock-tick resolution, 10 ms at the usual 100 Hz, which includes reaped children).
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";

const ticksPerSecond = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"]).toString().trim()) || 100;
  } catch {
    return 100;
  }
})();

type Stat = {
  pid: number;
  comm: string;
  ppid: number;
  utime: number;
  stime: number;
  cutime: number;
  cstime: number;
};

function stat(pid: number): Stat | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    const close = text.lastIndexOf(")");
    const comm = text.slice(text.indexOf("(") + 1, close);
    const f = text.slice(close + 2).split(" ");
    const n = (i: number) => Number(f[i]);
    return { pid, comm, ppid: n(1), utime: n(11), stime: n(12), cutime: n(13), cstime: n(14) };
  } catch {
    return null;
  }
}

function allStats(): Stat[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map((name) => stat(Number(name)))
    .filter((s): s is Stat => s !== null);
}

/** Every descendant of `root` (children, grandchildren, …). */
export function descendants(root: number): Stat[] {
  const stats = allStats();
  const found: Stat[] = [];
  const frontier = [root];
  while (frontier.length > 0) {
    const parent = frontier.pop() as number;
    for (const s of stats) {
      if (s.ppid === parent) {
        found.push(s);
        frontier.push(s.pid);
      }
    }
  }
  return found;
}

/** CPU µs a process has used so far (its own threads; `withChildren` adds its reaped children). */
export function cpuMicros(pid: number, withChildren = false): number {
  const s = stat(pid);
  if (!s) return 0;
  const ticks = s.utime + s.stime + (withChildren ? s.cutime + s.cstime : 0);
  return Math.round((ticks / ticksPerSecond) * 1e6);
}

/** CPU µs the live threads of a process have run (each thread's schedstat), or the `stat` figure. */
export function threadCpuMicros(pid: number): number {
  try {
    let ns = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const first = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0];
      ns += Number(first);
    }
    return Number.isFinite(ns) && ns > 0 ? Math.round(ns / 1000) : cpuMicros(pid);
  } catch {
    return cpuMicros(pid);
  }
}

/** CPU µs of a process tree: `root` with its reaped children, plus every live descendant. */
export function treeCpuMicros(root: number): number {
  return cpuMicros(root, true) + descendants(root).reduce((sum, s) => sum + cpuMicros(s.pid), 0);
}

/** The pid of the process (among `candidates`, or any) listening on TCP `port` on 127.0.0.1, or null. */
export function pidListeningOn(port: number, candidates?: number[]): number | null {
  const inodes = new Set<string>();
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let table = "";
    try {
      table = readFileSync(file, "utf8");
    } catch {
      continue;
    }
    for (const line of table.split("\n").slice(1)) {
      const cols = line.trim().split(/\s+/);
      const local = cols[1]?.split(":")[1];
      if (cols[3] === "0A" && local && Number.parseInt(local, 16) === port && cols[9]) inodes.add(cols[9]);
    }
  }
  const pids = candidates ?? allStats().map((s) => s.pid);
  for (const pid of pids) {
    let fds: string[] = [];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const link = readlinkSync(`/proc/${pid}/fd/${fd}`);
        const inode = /^socket:\[(\d+)\]$/.exec(link)?.[1];
        if (inode && inodes.has(inode)) return pid;
      } catch {
        // the descriptor closed while we looked
      }
    }
  }
  return null;
}

/** The workerd serving `port`: a descendant of this process named workerd, preferably the listener. */
export function findWorkerd(port: number): number | null {
  const workerds = descendants(process.pid).filter((s) => s.comm === "workerd");
  const listening = pidListeningOn(
    port,
    workerds.map((s) => s.pid),
  );
  if (listening) return listening;
  if (workerds.length === 1) return (workerds[0] as Stat).pid;
  return pidListeningOn(port);
}

/** Name of a process (its `comm`), or null if it is gone. */
export function processName(pid: number): string | null {
  return stat(pid)?.comm ?? null;
}

/** CPU µs so far of the processes an order crosses: a server, redis-server, Postgres (its tree), and this process (the stand-ins). */
export type StackCpu = { server: number; redis: number; postgres: number; self: number };

/**
 * Reads {@link StackCpu} for the server `pid` and the stack's redis-server and Postgres pids (0 or null:
 * not measured).
 *
 * @example
 * const a = stackCpu(engine.child.pid, env.pids); … const b = stackCpu(engine.child.pid, env.pids);
 */
export function stackCpu(pid: number, pids: { redis: number | null; postgres: number | null }): StackCpu {
  const u = process.cpuUsage();
  return {
    server: cpuMicros(pid),
    redis: pids.redis ? cpuMicros(pids.redis) : 0,
    postgres: pids.postgres ? treeCpuMicros(pids.postgres) : 0,
    self: u.user + u.system,
  };
}

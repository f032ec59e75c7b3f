/**
 * Five-field cron schedules (minute hour day-of-month month day-of-week, UTC) and a timer that fires a
 * handler on them without overlapping runs: the Bun entry's Cron Trigger (src/runtime/bun.ts) and the
 * local stand-in for Workers' (local/cron.ts). A run still going when the next one is due is skipped.
 *
 * @example
 * const cron = startCron({ crons: ["* * * * *"], fire: () => sweep(deps) });
 * cron.stop();
 */
const MINUTE = 60_000;
const NAMES: Record<string, number> = Object.fromEntries([
  ..."JAN FEB MAR APR MAY JUN JUL AUG SEP OCT NOV DEC".split(" ").map((m, i) => [m, i + 1]),
  ..."SUN MON TUE WED THU FRI SAT".split(" ").map((d, i) => [d, i]),
]);
/** minute, hour, day of month, month, day of week (0 and 7 are Sunday) */
const FIELDS = [
  [0, 59],
  [0, 23],
  [1, 31],
  [1, 12],
  [0, 7],
] as const;

function parseField(text: string, [min, max]: readonly [number, number]): Set<number> {
  const values = new Set<number>();
  const value = (v: string) => {
    const n = NAMES[v.toUpperCase()] ?? (/^\d+$/.test(v) ? Number(v) : Number.NaN);
    if (!(n >= min && n <= max)) throw new Error(`cron value "${v}" is not supported (${min}–${max})`);
    return n;
  };
  for (const part of text.split(",")) {
    const [range = "", step = "1"] = part.split("/");
    if (!/^\d+$/.test(step) || Number(step) < 1) throw new Error(`cron step "${part}" is not supported`);
    const [from, to] = range === "*" ? [min, max] : range.split("-").map(value);
    const last = to ?? (part.includes("/") ? max : (from as number));
    for (let v = from as number; v <= last; v += Number(step)) values.add(v);
  }
  return values;
}

/** A test for "does `expression` fire in the UTC minute holding this time" (day of month OR of week). */
function compileCron(expression: string): (time: number) => boolean {
  const parts = expression.trim().split(/\s+/);
  if (parts.length !== 5) throw new Error(`cron "${expression}" is not supported: five fields expected`);
  const [minute, hour, dom, month, dow] = parts.map((p, i) =>
    parseField(p, FIELDS[i] as [number, number]),
  ) as [Set<number>, Set<number>, Set<number>, Set<number>, Set<number>];
  const either = parts[2] !== "*" && parts[4] !== "*";
  return (time) => {
    const d = new Date(time);
    const weekday = d.getUTCDay();
    const domOk = dom.has(d.getUTCDate());
    const dowOk = dow.has(weekday) || (weekday === 0 && dow.has(7));
    return (
      minute.has(d.getUTCMinutes()) &&
      hour.has(d.getUTCHours()) &&
      month.has(d.getUTCMonth() + 1) &&
      (either ? domOk || dowOk : domOk && dowOk)
    );
  };
}

/** Whether `expression` fires in the UTC minute holding `time`. */
export function matchesCron(expression: string, time: number): boolean {
  return compileCron(expression)(time);
}

/** The first minute strictly after `after` at which `expression` fires (searches up to 5 years). */
export function nextCronTime(expression: string, after: number): number {
  const matches = compileCron(expression);
  const start = Math.floor(after / MINUTE) * MINUTE + MINUTE;
  for (let t = start; t < start + 5 * 366 * 24 * 60 * MINUTE; t += MINUTE) {
    if (matches(t)) return t;
  }
  throw new Error(`cron "${expression}" never fires`);
}

export type CronTrigger = { stop(): void };

/**
 * Fires `fire(cron)` for each of `crons` (default: wrangler.toml's) at its times, until `stop()`.
 * `intervalMs` replaces the schedule by a fixed period (tests, fault scenarios).
 */
export function startCron(options: {
  fire: (cron: string) => Promise<unknown>;
  crons: string[];
  intervalMs?: number;
  log?: (line: string) => void;
}): CronTrigger {
  const crons = options.crons;
  const timers = new Set<ReturnType<typeof setTimeout>>();
  let stopped = false;
  const schedule = (expression: string) => {
    if (stopped) return;
    const now = Date.now();
    const due = options.intervalMs ? now + options.intervalMs : nextCronTime(expression, now);
    const timer = setTimeout(() => {
      timers.delete(timer);
      void run(expression);
    }, due - now);
    timers.add(timer);
  };
  const running = new Set<string>();
  const run = async (expression: string) => {
    schedule(expression);
    if (stopped || running.has(expression)) return;
    running.add(expression);
    try {
      await options.fire(expression);
    } catch (error) {
      options.log?.(`cron "${expression}" failed: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      running.delete(expression);
    }
  };
  for (const expression of crons) {
    nextCronTime(expression, Date.now()); // refuse an unsupported expression now, not at its time
    schedule(expression);
  }
  return {
    stop() {
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
    },
  };
}

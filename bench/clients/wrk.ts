/**
 * Debian's `wrk` as the bench's native load generator (the Node client tops out near 27,000 req/s on
 * this machine; wrk near 64,000): one thread, keep-alive connections, and a Lua script that sends each
 * request with its own shopper token (`Authorization: Bearer`) and client address (`CF-Connecting-IP`),
 * both prebuilt from a file before the clock starts. Installed like redis-server when missing
 * (local/system-packages.ts).
 *
 * @example
 * const tokens = await writeTokens(dir, secret, "run-1", 400_000);
 * const r = await runWrk({ url, method: "POST", path: "/api/buy/abc", tokens, seconds: 8, connections: 50 });
 */
import { execFile } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { ensureSystemPackages } from "../../local/system-packages";
import { shopperToken } from "./jwt";

/** One wrk run's figures: completed requests, wall time, latency percentiles (µs), failures by kind. */
export type WrkResult = {
  requests: number;
  durationUs: number;
  reqPerSec: number;
  p50Us: number;
  p99Us: number;
  /** answers outside 2xx/3xx (wrk's `errors.status`): every answer on a refusal path */
  non2xx: number;
  socketErrors: number;
  /** distinct tokens and addresses the script cycled through */
  distinct: number;
};

export type WrkPlan = {
  url: string;
  method: "GET" | "POST";
  path: string;
  /** the token file (writeTokens): one token a line, the n-th request sends token n mod count */
  tokens: { file: string; count: number };
  seconds: number;
  connections: number;
  body?: string;
};

/** Mints `count` shopper tokens (sub `<tag>-<i>`) into a file of lines for the wrk script. */
export async function writeTokens(
  dir: string,
  secret: string,
  tag: string,
  count: number,
): Promise<WrkPlan["tokens"]> {
  const file = join(dir, `tokens-${tag}.txt`);
  const lines: string[] = new Array(count);
  for (let i = 0; i < count; i++) lines[i] = shopperToken(secret, `${tag}-${i}`);
  await writeFile(file, `${lines.join("\n")}\n`);
  return { file, count };
}

const lua = (plan: WrkPlan) => `
local reqs, n, i = {}, 0, 0
function init(args)
  for line in io.lines(${JSON.stringify(plan.tokens.file)}) do
    n = n + 1
    local ip = "10." .. (math.floor(n / 65536) % 256) .. "." .. (math.floor(n / 256) % 256) .. "." .. (n % 256)
    reqs[n] = wrk.format(${JSON.stringify(plan.method)}, ${JSON.stringify(plan.path)}, {
      ["Authorization"] = "Bearer " .. line,
      ["CF-Connecting-IP"] = ip,
      ["Content-Type"] = "application/json",
    }, ${plan.body === undefined ? "nil" : JSON.stringify(plan.body)})
  end
end
function request()
  i = i + 1
  if i > n then i = 1 end
  return reqs[i]
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRK_JSON {"requests":%d,"durationUs":%d,"p50Us":%d,"p99Us":%d,"non2xx":%d,"socketErrors":%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), e.status,
    e.connect + e.read + e.write + e.timeout))
end
`;

/** Runs wrk once (one thread) with the plan's script; resolves its figures. */
export async function runWrk(plan: WrkPlan, scriptDir: string): Promise<WrkResult> {
  ensureSystemPackages(["wrk"], { for: "npm run bench" });
  const script = join(scriptDir, `wrk-${process.pid}.lua`);
  await writeFile(script, lua(plan));
  const args = ["-t1", `-c${plan.connections}`, `-d${plan.seconds}s`, "--timeout", "10s", "-s", script];
  const stdout = await new Promise<string>((resolve, reject) =>
    execFile("wrk", [...args, `${plan.url}${plan.path}`], { maxBuffer: 1 << 20 }, (error, out, err) =>
      error ? reject(new Error(`wrk failed: ${error.message}\n${err}`)) : resolve(out),
    ),
  );
  const line = stdout.split("\n").find((l) => l.startsWith("WRK_JSON "));
  if (!line) throw new Error(`wrk printed no summary:\n${stdout}`);
  const raw = JSON.parse(line.slice("WRK_JSON ".length)) as Omit<WrkResult, "reqPerSec" | "distinct">;
  return {
    ...raw,
    reqPerSec: Math.round(raw.requests / (raw.durationUs / 1e6)),
    distinct: plan.tokens.count,
  };
}

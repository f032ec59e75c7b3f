import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, LOOPBACK, waitFor } from "../../local/ports";

export type PrometheusServer = {
  url: string;
  /** An instant query's vector, through the HTTP API (`/api/v1/query`). */
  query(promql: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]>;
  /** The scrape targets' health and last error (`/api/v1/targets`), for a failure's message. */
  targets(): Promise<unknown>;
  stop(): Promise<void>;
};

/**
 * A real Prometheus (the system's `prometheus` binary: Debian's package) scraping `target`'s
 * `/metrics` every second with a bearer token, its storage in a temporary directory, its API on a free
 * loopback port. Fails with what to install when the binary is missing.
 *
 * @example
 * const prom = await startPrometheus({ target: worker.url, token: ADMIN_TOKEN });
 * await prom.query('sum(flashsale_buy_outcomes_total{code="ADMITTED"})');
 * await prom.stop();
 */
export async function startPrometheus(opts: { target: string; token: string }): Promise<PrometheusServer> {
  const binary = process.env.PROMETHEUS_BIN ?? "prometheus";
  const probe = spawnSync(binary, ["--version"], { stdio: "ignore" });
  if (probe.error || probe.status !== 0)
    throw new Error(
      `prometheus is not installed (${binary}): install Debian's package (apt-get install prometheus), or set PROMETHEUS_BIN`,
    );
  const dir = await mkdtemp(join(tmpdir(), "prometheus-"));
  const target = new URL(opts.target);
  const config = [
    "global:",
    "  scrape_interval: 1s",
    "  scrape_timeout: 1s",
    "scrape_configs:",
    "  - job_name: flashsale",
    "    metrics_path: /metrics",
    `    scheme: ${target.protocol.replace(":", "")}`,
    "    authorization:",
    "      type: Bearer",
    `      credentials: ${JSON.stringify(opts.token)}`,
    "    static_configs:",
    `      - targets: [${JSON.stringify(target.host)}]`,
    "",
  ].join("\n");
  await writeFile(join(dir, "prometheus.yml"), config);
  const port = await freePort();
  const url = `http://${LOOPBACK}:${port}`;
  const child: ChildProcess = spawn(
    binary,
    [
      `--config.file=${join(dir, "prometheus.yml")}`,
      `--storage.tsdb.path=${join(dir, "data")}`,
      `--web.listen-address=${LOOPBACK}:${port}`,
      "--log.level=warn",
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let stderr = "";
  child.stderr?.on("data", (chunk) => {
    stderr = (stderr + String(chunk)).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async () => {
    if (child.exitCode === null) {
      child.kill("SIGTERM");
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      if (child.exitCode === null) child.kill("SIGKILL");
    }
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await waitFor(async () => (await fetch(`${url}/-/ready`)).ok, {
      timeoutMs: 20_000,
      intervalMs: 100,
      what: "prometheus to be ready",
    });
  } catch (error) {
    await stop();
    throw new Error(`${(error as Error).message}\n${stderr}`);
  }
  return {
    url,
    async query(promql) {
      const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(promql)}`);
      const body = (await res.json()) as { status: string; data?: { result: [] }; error?: string };
      if (body.status !== "success") throw new Error(`query ${promql}: ${body.error ?? res.status}`);
      return body.data?.result ?? [];
    },
    async targets() {
      return (await fetch(`${url}/api/v1/targets`)).json();
    },
    stop,
  };
}

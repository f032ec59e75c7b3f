import { describe, expect, it } from "vitest";
import { appForFile } from "../../support/app-per-file";
import { parseExposition } from "../../support/exposition";
import { startPrometheus } from "../../support/prometheus";
import { ADMIN_TOKEN } from "../../support/shopper";
import { testRuntime } from "../../support/test-runtime";

const runtime = testRuntime();
const app = appForFile();

function metrics(token?: string): Promise<Response> {
  return fetch(`${app.worker.url}/metrics`, token ? { headers: { Authorization: `Bearer ${token}` } } : {});
}

describe.runIf(runtime === "workers")("GET /metrics on Workers", () => {
  it("is not there: 404 NOT_FOUND (Workers Logs and Analytics Engine watch a Worker)", async () => {
    const res = await metrics(ADMIN_TOKEN);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("NOT_FOUND");
  });
});

describe.skipIf(runtime === "workers")("GET /metrics on a server runtime (Deno, Bun)", () => {
  it("is the operator's: 401 without the token or with another, the contract's error body", async () => {
    for (const res of [await metrics(), await metrics("not-the-token")]) {
      expect(res.status).toBe(401);
      const body = (await res.json()) as { error: { code: string; requestId: string } };
      expect(body.error.code).toBe("UNAUTHENTICATED");
      expect(body.error.requestId).toBe(res.headers.get("X-Request-Id"));
    }
  });

  it("counts every buy's answer, the front door's from memory included, and the units admitted once", async () => {
    const sale = await app.api.createSale({ stock: 5, perUserLimit: 2 });
    const statuses: number[] = [];
    const keyed = { "Idempotency-Key": "metrics-d-1" };
    statuses.push((await app.api.buy(sale.productToken, "metrics-a", 2)).status);
    statuses.push((await app.api.buy(sale.productToken, "metrics-b")).status);
    statuses.push((await app.api.buy(sale.productToken, "metrics-c")).status);
    statuses.push((await app.api.buy(sale.productToken, "metrics-d", 1, keyed)).status);
    // the same answer given again: a 202 counted, its unit not
    statuses.push((await app.api.buy(sale.productToken, "metrics-d", 1, keyed)).status);
    // sold out: the process remembers it from the last unit taken, so these are answered from memory
    // (before the app, at the front door), and must be counted all the same
    for (let i = 0; i < 5; i++)
      statuses.push((await app.api.buy(sale.productToken, `metrics-late-${i}`)).status);
    expect(statuses).toEqual([202, 202, 202, 202, 202, 410, 410, 410, 410, 410]);

    const res = await metrics(ADMIN_TOKEN);
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const samples = parseExposition(await res.text());
    expect(samples.get('flashsale_buy_outcomes_total{code="ADMITTED"}')).toBe(5);
    expect(samples.get('flashsale_buy_outcomes_total{code="SOLD_OUT"}')).toBe(5);
    expect(samples.get("flashsale_admitted_units_total")).toBe(5);
    const buyRoute = 'route="/api/buy/:productToken"';
    expect(samples.get(`flashsale_http_requests_total{${buyRoute},method="POST",status="202"}`)).toBe(5);
    expect(samples.get(`flashsale_http_requests_total{${buyRoute},method="POST",status="410"}`)).toBe(5);
    expect(samples.get(`flashsale_http_request_duration_seconds_count{${buyRoute}}`)).toBe(10);
    expect(samples.get(`flashsale_http_request_duration_seconds_bucket{le="+Inf",${buyRoute}}`)).toBe(10);
    expect(samples.get('flashsale_open_streams{kind="sale"}')).toBe(0);
  });

  it("is scraped by a real Prometheus with the bearer token, which then answers the buy counts", async () => {
    const prom = await startPrometheus({ target: app.worker.url, token: ADMIN_TOKEN });
    try {
      const admitted = 'sum(flashsale_buy_outcomes_total{code="ADMITTED"})';
      let value: string | undefined;
      const deadline = Date.now() + 30_000;
      while (Date.now() < deadline) {
        value = (await prom.query(admitted))[0]?.value[1];
        if (value !== undefined) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      if (value === undefined)
        throw new Error(`no scrape within 30 s: ${JSON.stringify(await prom.targets())}`);
      expect(value).toBe("5");
      expect((await prom.query('up{job="flashsale"}'))[0]?.value[1]).toBe("1");
      expect((await prom.query("sum(flashsale_admitted_units_total)"))[0]?.value[1]).toBe("5");
    } finally {
      await prom.stop();
    }
  });
});

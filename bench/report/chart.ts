/**
 * latest.svg: answers per second and p99 latency over time for the project, the naive baseline and the
 * no-op route (each on its own clock, the sell-out marked), and CPU per attempt by outcome from the probes.
 */
import type { Bucket } from "../clients/protocol";
import type { BenchResult } from "../measure/measures";

const W = 960;
const PAD = { left: 64, right: 24 };
const COLORS: Record<string, string> = { project: "#2563eb", naive: "#dc2626", "no-op": "#6b7280" };
const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;");

type Series = {
  name: string;
  buckets: Bucket[];
  bucketMs: number;
  soldOutAtMs: number | null;
  /** Only this outcome's answers (e.g. "202"); all answers when absent. */
  only?: string;
};

function linePanel(
  y0: number,
  h: number,
  title: string,
  series: Series[],
  value: (b: Bucket, s: Series) => number,
  unit: string,
  log = false,
): string {
  const xMax = Math.max(1, ...series.map((s) => s.buckets.length * s.bucketMs)) / 1000;
  const values = series.flatMap((s) => s.buckets.map((b) => value(b, s)));
  const yMaxRaw = Math.max(1, ...values);
  const yMin = log
    ? 10 ** Math.floor(Math.log10(Math.max(0.1, Math.min(...values.filter((v) => v > 0), yMaxRaw))))
    : 0;
  const yMax = log ? 10 ** Math.ceil(Math.log10(yMaxRaw)) : niceCeil(yMaxRaw);
  const x = (t: number) => PAD.left + (t / xMax) * (W - PAD.left - PAD.right);
  const y = (v: number) =>
    log
      ? y0 +
        h -
        ((Math.log10(Math.max(v, yMin)) - Math.log10(yMin)) / (Math.log10(yMax) - Math.log10(yMin) || 1)) * h
      : y0 + h - (v / yMax) * h;
  const parts = [`<text x="${PAD.left}" y="${y0 - 8}" class="title">${esc(title)}</text>`];
  parts.push(
    `<rect x="${PAD.left}" y="${y0}" width="${W - PAD.left - PAD.right}" height="${h}" class="frame"/>`,
  );
  const ticks = log
    ? Array.from({ length: Math.round(Math.log10(yMax / yMin)) + 1 }, (_, i) => yMin * 10 ** i).filter(
        (v) => v <= yMax,
      )
    : [0, 0.25, 0.5, 0.75, 1].map((f) => f * yMax);
  for (const v of ticks)
    parts.push(`<text x="${PAD.left - 6}" y="${y(v) + 4}" class="axis" text-anchor="end">${fmt(v)}</text>`);
  parts.push(`<text x="${PAD.left - 6}" y="${y0 - 8}" class="axis" text-anchor="end">${esc(unit)}</text>`);
  const step = tickStep(xMax);
  for (let k = 0; k * step <= xMax; k++) {
    const t = Math.round(k * step * 100) / 100;
    parts.push(`<text x="${x(t)}" y="${y0 + h + 14}" class="axis" text-anchor="middle">${t}s</text>`);
  }
  for (const s of series) {
    const color = COLORS[s.name.split(" ")[0] ?? ""] ?? "#111";
    const points = s.buckets.map(
      (b) => `${x((b.t + s.bucketMs / 2) / 1000).toFixed(1)},${y(value(b, s)).toFixed(1)}`,
    );
    parts.push(`<polyline points="${points.join(" ")}" fill="none" stroke="${color}" stroke-width="1.5"/>`);
    if (s.soldOutAtMs !== null)
      parts.push(
        `<line x1="${x(s.soldOutAtMs / 1000)}" x2="${x(s.soldOutAtMs / 1000)}" y1="${y0}" y2="${y0 + h}" stroke="${color}" stroke-dasharray="4 3"/>`,
      );
  }
  series.forEach((s, i) => {
    const color = COLORS[s.name.split(" ")[0] ?? ""] ?? "#111";
    parts.push(
      `<text x="${W - PAD.right - 8}" y="${y0 + 16 + i * 14}" text-anchor="end" class="legend" fill="${color}">${esc(s.name)}</text>`,
    );
  });
  return parts.join("\n");
}

function barsPanel(y0: number, r: BenchResult): { svg: string; height: number } {
  const rows = r.probes.map((p) => ({
    name: p.name,
    worker: p.per.workerCpuMicros ?? 0,
    redis: p.per.redisCpuMicros,
  }));
  const h = rows.length * 22;
  const max = niceCeil(Math.max(1, ...rows.flatMap((row) => [row.worker, row.redis])));
  const left = 260;
  const x = (v: number) => left + (v / max) * (W - left - PAD.right - 60);
  const parts = [
    `<text x="${PAD.left}" y="${y0 - 8}" class="title">CPU per attempt by outcome (probes): worker (workerd) and redis-server, µs</text>`,
  ];
  rows.forEach((row, i) => {
    const y = y0 + i * 22;
    parts.push(`<text x="${left - 8}" y="${y + 13}" class="axis" text-anchor="end">${esc(row.name)}</text>`);
    parts.push(
      `<rect x="${left}" y="${y + 2}" width="${Math.max(0.5, x(row.worker) - left)}" height="8" fill="#2563eb"/>`,
    );
    parts.push(
      `<rect x="${left}" y="${y + 11}" width="${Math.max(0.5, x(row.redis) - left)}" height="8" fill="#f59e0b"/>`,
    );
    parts.push(
      `<text x="${x(Math.max(row.worker, row.redis)) + 6}" y="${y + 13}" class="axis">${fmt(row.worker)} / ${fmt(row.redis)}</text>`,
    );
  });
  return { svg: parts.join("\n"), height: h };
}

export function renderChart(r: BenchResult): string {
  const series: Series[] = [
    { name: "project worker", ...pick(r.project.load), soldOutAtMs: r.project.soldOutAtMs },
    ...(r.naive
      ? [{ name: "naive Postgres", ...pick(r.naive.load), soldOutAtMs: r.naive.load.soldOutAtMs }]
      : []),
    ...(r.noop ? [{ name: "no-op route", ...pick(r.noop.load), soldOutAtMs: null }] : []),
  ];
  const perSecond = (b: Bucket, s: Series) =>
    ((s.only ? (b.byOutcome[s.only] ?? 0) : b.count) / s.bucketMs) * 1000;
  const rush: Series[] = [
    {
      name: "project all answers",
      buckets: r.project.load.rushBuckets,
      bucketMs: 100,
      soldOutAtMs: r.project.soldOutAtMs,
    },
    {
      name: "project 202 reserved",
      buckets: r.project.load.rushBuckets,
      bucketMs: 100,
      soldOutAtMs: null,
      only: "202",
    },
    ...(r.naive
      ? [
          {
            name: "naive all answers",
            buckets: r.naive.load.rushBuckets,
            bucketMs: 100,
            soldOutAtMs: r.naive.load.soldOutAtMs,
          },
          {
            name: "naive 202 reserved",
            buckets: r.naive.load.rushBuckets,
            bucketMs: 100,
            soldOutAtMs: null,
            only: "202",
          },
        ]
      : []),
  ];
  const panels = [
    linePanel(
      60,
      180,
      "The rush: answers per second until sold out (100 ms slices)",
      rush,
      perSecond,
      "per s",
    ),
    linePanel(
      300,
      180,
      "Whole crowd: answers per second (dashed line: first SOLD_OUT answer)",
      series,
      perSecond,
      "per s",
    ),
    linePanel(540, 180, "p99 latency per time slice (log scale)", series, (b) => b.p99, "ms", true),
  ];
  const bars = barsPanel(790, r);
  const height = 790 + bars.height + 30;
  const m = r.meta;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${height}" viewBox="0 0 ${W} ${height}" font-family="system-ui, sans-serif">
<style>.title{font-size:13px;font-weight:600}.axis{font-size:11px;fill:#444}.legend{font-size:12px}.frame{fill:none;stroke:#ccc}</style>
<rect width="100%" height="100%" fill="#fff"/>
<text x="${PAD.left}" y="24" font-size="15" font-weight="700">Flash-sale benchmark: ${m.users.toLocaleString("en-US")} users, ${m.concurrency} connections · ${esc(m.date)}</text>
${panels.join("\n")}
${bars.svg}
</svg>
`;
}

function pick(load: { buckets: Bucket[]; bucketMs: number }) {
  return { buckets: load.buckets, bucketMs: load.bucketMs };
}

function niceCeil(v: number): number {
  const p = 10 ** Math.floor(Math.log10(v));
  return ([1, 2, 2.5, 5, 10].find((m) => m * p >= v) ?? 10) * p;
}

function tickStep(max: number): number {
  return [0.1, 0.25, 0.5, 1, 2, 5, 10, 15, 30, 60, 120].find((s) => max / s <= 12) ?? 300;
}

function fmt(v: number): string {
  return v >= 100 ? Math.round(v).toLocaleString("en-US") : String(Math.round(v * 10) / 10);
}

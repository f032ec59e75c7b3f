/**
 * latest-runtimes.svg: per runtime and phase of the seed-000 crowd, the engine's attempts per second next
 * to the naive Postgres server's on the same runtime (with the ratio), p50/p90/p99 of both, and the
 * engine's CPU per attempt.
 */
import type { RuntimeLine, RuntimesSummary } from "./runtimes-summary";

const W = 960;
const LEFT = 150;
const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;");
const fmt = (v: number) =>
  v >= 100 ? Math.round(v).toLocaleString("en-US") : String(Math.round(v * 10) / 10);

function niceCeil(v: number): number {
  const p = 10 ** Math.floor(Math.log10(Math.max(v, 1e-9)));
  return ([1, 2, 2.5, 5, 10].find((m) => m * p >= v) ?? 10) * p;
}

/** Horizontal bars, two per line (engine, naive), on a linear or log axis. */
function panel(
  y0: number,
  title: string,
  lines: RuntimeLine[],
  engine: (l: RuntimeLine) => number | null,
  naive: (l: RuntimeLine) => number | null,
  label: (l: RuntimeLine) => string,
  log = false,
): { svg: string; height: number } {
  const values = lines.flatMap((l) => [engine(l) ?? 0, naive(l) ?? 0]).filter((v) => v > 0);
  const max = log ? 10 ** Math.ceil(Math.log10(Math.max(1, ...values))) : niceCeil(Math.max(1, ...values));
  const min = log ? 10 ** Math.floor(Math.log10(Math.max(0.1, Math.min(max, ...values)))) : 0;
  const right = W - 220;
  const x = (v: number) =>
    LEFT +
    (log
      ? ((Math.log10(Math.max(v, min)) - Math.log10(min)) / (Math.log10(max) - Math.log10(min) || 1)) *
        (right - LEFT)
      : (v / max) * (right - LEFT));
  const parts = [`<text x="${LEFT}" y="${y0 - 8}" class="title">${esc(title)}</text>`];
  lines.forEach((l, i) => {
    const y = y0 + i * 26;
    parts.push(
      `<text x="${LEFT - 8}" y="${y + 15}" class="axis" text-anchor="end">${esc(`${l.runtime} · ${l.phase}`)}</text>`,
    );
    const e = engine(l);
    const n = naive(l);
    if (e !== null)
      parts.push(
        `<rect x="${LEFT}" y="${y + 2}" width="${Math.max(0.5, x(e) - LEFT)}" height="10" fill="#2563eb"/>`,
      );
    if (n !== null)
      parts.push(
        `<rect x="${LEFT}" y="${y + 13}" width="${Math.max(0.5, x(n) - LEFT)}" height="10" fill="#dc2626"/>`,
      );
    parts.push(`<text x="${right + 8}" y="${y + 15}" class="axis">${esc(label(l))}</text>`);
  });
  const ticks = log
    ? Array.from({ length: Math.round(Math.log10(max / min)) + 1 }, (_, k) => min * 10 ** k)
    : [0, 0.25, 0.5, 0.75, 1].map((f) => f * max);
  const bottom = y0 + lines.length * 26 + 4;
  for (const t of ticks)
    parts.push(`<text x="${x(t)}" y="${bottom + 10}" class="axis" text-anchor="middle">${fmt(t)}</text>`);
  return { svg: parts.join("\n"), height: lines.length * 26 + 50 };
}

export function renderRuntimesChart(
  s: RuntimesSummary,
  meta: { users: number; concurrency: number; versions: Record<string, string> },
): string {
  let y = 70;
  const parts: string[] = [];
  const add = (p: { svg: string; height: number }) => {
    parts.push(p.svg);
    y += p.height;
  };
  add(
    panel(
      y,
      "Attempts per second: engine (blue) and the naive Postgres server on the same runtime (red)",
      s.lines,
      (l) => l.perSecond,
      (l) => l.naive?.perSecond ?? null,
      (l) => `${fmt(l.perSecond)} vs ${l.naive ? fmt(l.naive.perSecond) : "–"}/s · ${l.ratio ?? "–"}×`,
    ),
  );
  add(
    panel(
      y,
      "p99 latency, ms (log scale): engine (blue), naive (red)",
      s.lines,
      (l) => l.p99,
      (l) => l.naive?.p99 ?? null,
      (l) =>
        `p50/p90/p99 ${fmt(l.p50)}/${fmt(l.p90)}/${fmt(l.p99)} · naive ${l.naive ? `${fmt(l.naive.p50)}/${fmt(l.naive.p90)}/${fmt(l.naive.p99)}` : "–"}`,
      true,
    ),
  );
  add(
    panel(
      y,
      "Server process CPU per attempt, µs: engine (blue), naive (red)",
      s.lines,
      (l) => l.engineCpuMicros,
      (l) => l.naive?.cpuMicros ?? null,
      (l) =>
        `${l.engineCpuMicros === null ? "–" : fmt(l.engineCpuMicros)} vs ${l.naive?.cpuMicros == null ? "–" : fmt(l.naive.cpuMicros)} µs · ${l.evalsha} EVALSHA`,
    ),
  );
  const goals = s.goals.map(
    (g, i) =>
      `<text x="${LEFT}" y="${y + 18 + i * 16}" class="legend" fill="${g.met ? "#15803d" : "#b91c1c"}">${g.met ? "✓" : "✗"} ${esc(`${g.goal}: ${g.measured}`)}</text>`,
  );
  const height = y + 30 + goals.length * 16;
  const versions = Object.entries(meta.versions)
    .map(([k, v]) => `${k} ${v}`)
    .join(", ");
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${height}" viewBox="0 0 ${W} ${height}" font-family="system-ui, sans-serif" role="img" aria-label="Flash-sale benchmark across runtimes">
<style>.title{font-size:13px;font-weight:600}.axis{font-size:11px;fill:#444}.legend{font-size:12px}</style>
<rect width="100%" height="100%" fill="#fff"/>
<text x="${LEFT}" y="24" font-size="15" font-weight="700">Across runtimes: seed-000 crowd, ${meta.users.toLocaleString("en-US")} users, ${meta.concurrency} connections</text>
<text x="${LEFT}" y="42" class="axis">${esc(versions)} · the naive server runs on the same runtime as the engine it is compared with</text>
${parts.join("\n")}
${goals.join("\n")}
</svg>
`;
}

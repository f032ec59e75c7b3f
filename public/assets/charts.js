/**
 * Two small charts drawn by hand in SVG (no library): the remaining stock as a falling step line, and
 * outcomes per second as stacked bars. Each call redraws the chart at the container's current size.
 */
const NS = "http://www.w3.org/2000/svg";
const PAD = { left: 46, right: 14, top: 12, bottom: 24 };

function svg(tag, attrs = {}, text) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}

/** A round whole-number tick step so that about four steps cover `v`: 1, 2, 5, 10, 20, 25, 50, … */
export function niceStep(v) {
  const raw = Math.max(1, v / 4);
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 2.5, 5, 10]) {
    const step = m * magnitude;
    if (step >= raw && Number.isInteger(step)) return step;
  }
  return 10 * magnitude;
}

/** The axis: `{ max, step }` with `max` a multiple of `step` at or above `v`. */
export function niceAxis(v) {
  const w = Math.max(v, 4);
  const step = niceStep(w);
  return { step, max: Math.ceil(w / step) * step };
}

/** An axis label relative to now: "now", "-20 s", "-2:30". */
function ago(ms) {
  const seconds = Math.round(ms / 1000);
  if (seconds <= 0) return "now";
  if (seconds < 90) return `-${seconds} s`;
  return `-${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`;
}

function frame(el, axis, label) {
  const yMax = axis.max;
  const width = Math.max(240, el.clientWidth);
  const height = Math.max(120, el.clientHeight);
  const root = svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": label });
  const plotW = width - PAD.left - PAD.right;
  const plotH = height - PAD.top - PAD.bottom;
  const y = (v) => PAD.top + (1 - v / yMax) * plotH;
  for (let v = 0; v <= yMax; v += axis.step) {
    root.append(
      svg("line", {
        x1: PAD.left,
        x2: width - PAD.right,
        y1: y(v),
        y2: y(v),
        stroke: v ? "#eceae4" : "#cfccc4",
      }),
      svg("text", { x: PAD.left - 8, y: y(v) + 4, "text-anchor": "end" }, v.toLocaleString()),
    );
  }
  return { root, width, height, plotW, plotH, y };
}

function timeTicks(f, x, t0, t1, now = t1) {
  const n = f.width < 420 ? 2 : 3;
  for (let i = 0; i <= n; i++) {
    const t = t0 + ((t1 - t0) * i) / n;
    const anchor = i === 0 ? "start" : i === n ? "end" : "middle";
    f.root.append(svg("text", { x: x(t), y: f.height - 6, "text-anchor": anchor }, ago(now - t)));
  }
}

/**
 * Remaining stock over time. `samples` = `[{ t, remaining }]` (t on the server's clock, ms), oldest
 * first; the window grows from 30 seconds up to `windowMs`.
 */
export function drawStockChart(el, samples, { stock, now, windowMs = 5 * 60_000 }) {
  const last = samples.at(-1);
  const axis = niceAxis(Math.max(stock, ...samples.map((s) => s.remaining), 1));
  const label = last ? `Remaining stock: ${last.remaining} of ${stock}` : "Remaining stock: no samples yet";
  const f = frame(el, axis, label);
  const t1 = now;
  const t0 = Math.max(t1 - windowMs, Math.min(t1 - 30_000, samples[0]?.t ?? t1));
  const x = (t) => PAD.left + ((t - t0) / (t1 - t0)) * f.plotW;
  timeTicks(f, x, t0, t1);
  const shown = samples.filter((s) => s.t >= t0);
  if (shown.length > 0) {
    let d = `M ${x(shown[0].t)} ${f.y(shown[0].remaining)}`;
    for (const s of shown.slice(1)) d += ` H ${x(s.t)} V ${f.y(s.remaining)}`;
    d += ` H ${x(t1)}`;
    const base = f.y(0);
    f.root.append(
      svg("path", { d: `${d} V ${base} H ${x(shown[0].t)} Z`, fill: "rgb(214 51 42 / 10%)" }),
      svg("path", { d, fill: "none", stroke: "#d6332a", "stroke-width": 2.5, "stroke-linejoin": "round" }),
      svg("circle", {
        cx: x(t1),
        cy: f.y(last.remaining),
        r: 4.5,
        fill: "#d6332a",
        stroke: "#fff",
        "stroke-width": 2,
      }),
    );
  }
  el.replaceChildren(f.root);
}

export const OUTCOME_SERIES = [
  { key: "reserved", label: "Reserved", color: "#12805c" },
  { key: "soldOut", label: "Sold out", color: "#8d93a0" },
  { key: "limited", label: "Limit reached", color: "#e39b17" },
  { key: "rateLimited", label: "Rate-limited", color: "#7c5cd6" },
  {
    key: "closed",
    label: "Paused / closed",
    color: "#d6332a",
    from: ["paused", "restoring", "notStarted", "ended"],
  },
];

/** One timeline point's counts folded into the chart's series. */
export function seriesCounts(counts = {}) {
  const out = {};
  for (const s of OUTCOME_SERIES) out[s.key] = (s.from ?? [s.key]).reduce((n, k) => n + (counts[k] ?? 0), 0);
  return out;
}

/** Outcomes per second as stacked bars for the last `windowSec` seconds. `points` from the timeline route. */
export function drawOutcomeChart(el, points, { nowSec, windowSec = 60 }) {
  const bySecond = new Map(points.map((p) => [p.second, seriesCounts(p.counts)]));
  const first = nowSec - windowSec + 1;
  let peak = 0;
  for (let s = first; s <= nowSec; s++) {
    const c = bySecond.get(s);
    if (c)
      peak = Math.max(
        peak,
        Object.values(c).reduce((a, b) => a + b, 0),
      );
  }
  const f = frame(
    el,
    niceAxis(peak),
    `Outcomes per second, last ${windowSec} seconds, peak ${peak} per second`,
  );
  const slot = f.plotW / windowSec;
  const x = (t) => PAD.left + ((t - first * 1000) / (windowSec * 1000)) * f.plotW;
  timeTicks(f, x, first * 1000, (nowSec + 1) * 1000);
  const bars = svg("g");
  for (let s = first; s <= nowSec; s++) {
    const c = bySecond.get(s);
    if (!c) continue;
    let acc = 0;
    for (const series of OUTCOME_SERIES) {
      const n = c[series.key];
      if (!n) continue;
      const top = f.y(acc + n);
      bars.append(
        svg("rect", {
          x: PAD.left + (s - first) * slot + slot * 0.12,
          y: top,
          width: Math.max(1, slot * 0.76),
          height: Math.max(0.5, f.y(acc) - top),
          fill: series.color,
        }),
      );
      acc += n;
    }
  }
  f.root.append(bars);
  el.replaceChildren(f.root);
}

export const VARIANT_SERIES = [
  { key: "paid", label: "paid", color: "#12805c" },
  { key: "held", label: "held", color: "#e39b17" },
  { key: "left", label: "left", color: "#d6332a" },
];

/**
 * Each variant as one horizontal bar across its stock: paid, held (reserved, not paid yet) and left.
 * `rows` = `[{ name, stock, remaining, paidUnits, liveUnits }]`; the chart grows with the rows.
 */
export function drawVariantChart(el, rows) {
  const rowH = 26;
  const label = 72;
  const figures = 92;
  const width = Math.max(240, el.clientWidth);
  const height = rows.length * rowH + 6;
  const said = rows.map((r) =>
    r.remaining > 0 ? `${r.name} ${r.remaining} of ${r.stock} left` : `${r.name} sold out`,
  );
  const root = svg("svg", {
    viewBox: `0 0 ${width} ${height}`,
    role: "img",
    "aria-label": `Each variant: ${said.join(", ")}`,
  });
  const barW = Math.max(40, width - label - figures);
  rows.forEach((r, i) => {
    const y = i * rowH + 4;
    const parts = {
      paid: Math.max(0, r.paidUnits ?? 0),
      held: Math.max(0, (r.liveUnits ?? 0) - (r.paidUnits ?? 0)),
      left: Math.max(0, r.remaining),
    };
    const scale = Math.max(1, r.stock, parts.paid + parts.held + parts.left);
    const g = svg("g", { "data-variant-id": r.variantId });
    g.append(
      svg("title", {}, said[i]),
      svg("text", { x: 0, y: y + 14 }, r.name.length > 10 ? `${r.name.slice(0, 9)}…` : r.name),
      svg("rect", { x: label, y, width: barW, height: rowH - 8, rx: 3, fill: "#f1f0ec" }),
    );
    let x = label;
    for (const s of VARIANT_SERIES) {
      const w = (parts[s.key] / scale) * barW;
      if (w > 0) g.append(svg("rect", { x, y, width: w, height: rowH - 8, fill: s.color }));
      x += w;
    }
    g.append(
      svg(
        "text",
        { x: width, y: y + 14, "text-anchor": "end" },
        r.remaining > 0 ? `${r.remaining.toLocaleString()} / ${r.stock.toLocaleString()}` : "sold out",
      ),
    );
    root.append(g);
  });
  el.style.height = `${height}px`;
  el.replaceChildren(root);
}

import { adminApi, adminToken, lock } from "./admin-session.js";
import { drawOutcomeChart, drawStockChart, OUTCOME_SERIES, seriesCounts } from "./charts.js";
import { serverNow } from "./clock.js";
import { byId, h, setText } from "./dom.js";
import { formatInt, formatMoney, formatWhen } from "./format.js";
import { renderVariantSelect, renderVariantStats, selectedVariant } from "./live-variants.js";
import { followSale } from "./operator-stream.js";
import { renderReconcileReport } from "./reconcile-report.js";
import { mountRoomView } from "./room-view.js";
import { statusBadge } from "./sale-status.js";
import { hasChoice, priceLine, variantsOf } from "./variants.js";

const SAMPLE_MS = 1000;
const MAX_SAMPLES = 900;

/**
 * The live view of one sale: its stats and per-second outcome timeline are pushed through
 * `GET /api/admin/sales/:id/events` (a fetch stream: it needs the operator token); only while that
 * stream is down does it poll them every second. The latest stats are sampled every second (kept in
 * the page, per sale, for the stock chart); a sale of several variants also charts each one. Runs
 * pause/resume, stock adjustments (per variant on a sale of several) and reconciliation.
 * `onSaleChanged(sale)` lets the sales list refresh after an action.
 */
export function mountLiveView({ onSaleChanged }) {
  const samplesBySale = new Map();
  let sale = null;
  let timer = null;
  let timeline = [];
  let busy = false;
  let latest = null;
  let stream = null;

  const room = mountRoomView();
  const samples = () => samplesBySale.get(sale.saleId) ?? [];

  function renderHead() {
    const badge = statusBadge(sale.status);
    const el = byId("live-status");
    el.className = `badge ${badge.tone}`;
    setText(el, badge.text);
    setText(byId("live-name"), sale.name);
    const price = hasChoice(sale)
      ? `${variantsOf(sale).length} variants, ${priceLine(sale)}`
      : formatMoney(sale.priceCents);
    setText(
      byId("live-meta"),
      `${price} · limit ${sale.perUserLimit} · ${formatWhen(sale.startsAt)} – ${formatWhen(sale.endsAt)}`,
    );
    renderVariantSelect(sale);
    setText(byId("live-token"), sale.productToken ?? "");
    const pause = byId("pause-button");
    setText(pause, sale.status === "paused" ? "Resume" : "Pause");
    pause.disabled = sale.status === "ended" || busy;
  }

  function renderStats(stats) {
    setText(byId("k-remaining"), `${formatInt(stats.remaining)} / ${formatInt(stats.stock)}`);
    setText(byId("k-queued"), formatInt(stats.queued));
    setText(byId("k-awaiting"), formatInt(stats.awaitingPayment));
    setText(byId("k-paid"), formatInt(stats.paid));
    setText(byId("k-expired"), formatInt(stats.expired));
    setText(byId("k-cancelled"), formatInt(stats.cancelled));
    const inv = byId("invariant");
    inv.className = `badge ${stats.invariantHolds ? "badge-ok" : "badge-bad"}`;
    inv.dataset.holds = String(stats.invariantHolds);
    setText(inv, stats.invariantHolds ? "Invariant holds" : "Invariant broken");
    // what breaks it (a late write after a Redis loss: a user over the limit, units sold twice)
    const breaks = byId("invariant-breaks");
    const reasons = stats.invariantHolds ? [] : (stats.invariantBreaks ?? []);
    breaks.hidden = reasons.length === 0;
    setText(breaks, reasons.join(" · "));
    const sold = stats.stock - stats.remaining;
    setText(byId("stock-caption"), `${formatInt(sold)} reserved of ${formatInt(stats.stock)}`);
  }

  function renderCharts() {
    renderVariantStats(sale, latest);
    const list = samples();
    const last = list.at(-1);
    drawStockChart(byId("stock-chart"), list, { stock: last?.stock ?? sale.stock, now: serverNow() });
    const nowSec = Math.floor(serverNow() / 1000);
    drawOutcomeChart(byId("outcome-chart"), timeline, { nowSec });
    const totals = seriesCounts();
    for (const p of timeline) {
      if (p.second <= nowSec - 60) continue;
      const c = seriesCounts(p.counts);
      for (const k of Object.keys(totals)) totals[k] += c[k];
    }
    byId("outcome-legend").replaceChildren(
      ...OUTCOME_SERIES.map((s) =>
        h(
          "li",
          { "data-series": s.key },
          h("span", { class: "swatch", style: `background:${s.color}`, "aria-hidden": "true" }),
          `${s.label} `,
          h("strong", { class: "num" }, formatInt(totals[s.key])),
        ),
      ),
    );
  }

  function record(stats) {
    latest = stats;
    const list = samples();
    list.push({ t: serverNow(), remaining: stats.remaining, stock: stats.stock });
    if (list.length > MAX_SAMPLES) list.splice(0, list.length - MAX_SAMPLES);
    samplesBySale.set(sale.saleId, list);
    renderStats(stats);
  }

  /** Polls the stats and the timeline (only while the stream is down). */
  async function sample() {
    if (!sale) return;
    const id = sale.saleId;
    const [stats, tl] = await Promise.all([
      adminApi(`/sales/${id}/stats`),
      adminApi(`/sales/${id}/timeline`),
    ]);
    if (!sale || sale.saleId !== id || stream?.up) return;
    if (stats.ok) record(stats.data);
    if (tl.ok) timeline = tl.data.points;
    renderCharts();
  }

  /** Every second: polls while the stream is down, else samples the last pushed stats for the chart. */
  function loop() {
    clearTimeout(timer);
    timer = setTimeout(async () => {
      if (stream?.up) {
        if (latest) record(latest);
        renderCharts();
      } else await sample();
      if (sale) loop();
    }, SAMPLE_MS);
  }

  function unfollow() {
    stream?.stop();
    stream = null;
  }

  async function act(path, body, headers = {}) {
    busy = true;
    renderHead();
    const r = await adminApi(`/sales/${sale.saleId}${path}`, { method: "POST", body, headers });
    busy = false;
    if (r.ok && r.data.saleId && r.data.status) {
      sale = { ...sale, ...r.data };
      onSaleChanged(sale);
    }
    renderHead();
    return r;
  }

  byId("pause-button").addEventListener("click", () => act(sale.status === "paused" ? "/resume" : "/pause"));

  let pendingAdjustment = null;
  byId("stock-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const input = byId("stock-delta");
    const error = byId("stock-error");
    const delta = Number(input.value);
    const variantId = selectedVariant();
    if (!Number.isInteger(delta) || delta === 0) {
      error.textContent = "Enter a whole number other than 0, e.g. 50 or -10.";
      input.setAttribute("aria-invalid", "true");
      return;
    }
    // one Idempotency-Key per adjustment, reused when the operator sends the same one again after a
    // failure whose outcome is unknown (503, no connection): it is applied once whatever failed
    const same =
      pendingAdjustment?.saleId === sale.saleId &&
      pendingAdjustment.delta === delta &&
      pendingAdjustment.variantId === variantId;
    if (!same) pendingAdjustment = { saleId: sale.saleId, delta, variantId, key: crypto.randomUUID() };
    const r = await act("/stock", { delta, variantId }, { "Idempotency-Key": pendingAdjustment.key });
    if (r.ok || (r.status >= 400 && r.status < 500)) pendingAdjustment = null;
    input.setAttribute("aria-invalid", String(!r.ok));
    error.textContent = r.ok
      ? ""
      : r.error.code === "CONFLICT"
        ? `Cannot remove that many: at most ${formatInt(r.error.remaining ?? 0)} can go.`
        : r.error.message;
    if (r.ok) input.value = "";
    if (!stream?.up) sample(); // else the stream brings the new stock
  });

  byId("reconcile-button").addEventListener("click", async () => {
    const report = byId("reconcile-report");
    report.hidden = false;
    report.replaceChildren(h("p", { class: "muted" }, "Reconciling…"));
    const r = await act("/reconcile");
    if (r.ok) renderReconcileReport(report, r.data);
    else report.replaceChildren(h("p", { class: "notice notice-error" }, r.error.message));
    if (r.ok && r.data.paused) onSaleChanged({ ...sale, status: "paused" });
  });

  window.addEventListener("resize", () => sale && renderCharts());

  return {
    show(next) {
      const same = sale?.saleId === next.saleId;
      sale = next;
      byId("live-empty").hidden = true;
      byId("live-body").hidden = false;
      renderHead();
      room.show(next);
      if (!same) {
        timeline = [];
        latest = null;
        byId("reconcile-report").hidden = true;
        byId("stock-error").textContent = "";
        unfollow();
        const id = next.saleId;
        const mine = () => sale?.saleId === id;
        stream = followSale(id, {
          token: () => adminToken() ?? "",
          onStats: (stats) => {
            if (!mine()) return;
            record(stats);
            renderCharts();
          },
          onTimeline: (tl) => {
            if (!mine()) return;
            timeline = tl.points;
            renderCharts();
          },
          onUnauthorized: lock,
        });
        loop();
      }
    },
    /** The sale's latest operator view (from the sales list), without restarting sampling. */
    update(next) {
      if (sale?.saleId === next.saleId) {
        sale = next;
        renderHead();
      }
    },
    stop() {
      clearTimeout(timer);
      unfollow();
      sale = null;
      byId("live-empty").hidden = false;
      byId("live-body").hidden = true;
    },
    get saleId() {
      return sale?.saleId ?? null;
    },
  };
}

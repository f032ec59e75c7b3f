import { adminApi } from "./admin-session.js";
import { byId, setText } from "./dom.js";
import { formatInt } from "./format.js";

const POLL_MS = 2000;

/**
 * The waiting room of the sale in the live view (queue and draw sales): depth, frontier, the admission
 * rate (positions let in per minute, from the frontier's moves), the cutoff and the verdict counts,
 * read every 2 s from `GET /api/admin/sales/:id/queue`. Hidden for open sales.
 */
export function mountRoomView() {
  const box = byId("room-kpis");
  let saleId = null;
  let timer = null;
  let history = [];

  function render(f) {
    setText(byId("r-mode"), f.admission === "draw" ? "Draw" : "Queue");
    setText(byId("r-depth"), formatInt(f.tickets));
    setText(
      byId("r-frontier"),
      f.cutoff === null ? formatInt(f.frontier) : `${formatInt(f.frontier)} / ${formatInt(f.cutoff)}`,
    );
    const first = history[0];
    const last = history[history.length - 1];
    const minutes = first && last && last.t > first.t ? (last.t - first.t) / 60_000 : 0;
    setText(
      byId("r-rate"),
      minutes > 0 ? `${formatInt(Math.round((last.frontier - first.frontier) / minutes))}/min` : "–",
    );
    const v = f.verdicts;
    setText(byId("r-admitted"), formatInt(v.admitted));
    setText(byId("r-will"), formatInt(v.will_get));
    setText(byId("r-may"), formatInt(v.may_get));
    setText(byId("r-wont"), formatInt(v.will_not_get));
  }

  async function poll(id) {
    const r = await adminApi(`/sales/${id}/queue`);
    if (saleId !== id) return;
    if (r.ok) {
      history.push({ t: Date.now(), frontier: r.data.frontier });
      history = history.filter((p) => Date.now() - p.t <= 60_000);
      render(r.data);
    }
    timer = setTimeout(() => poll(id), POLL_MS);
  }

  return {
    /** Follows `sale`'s room when it has one (else hides the block). */
    show(sale) {
      if (sale.saleId === saleId) return;
      clearTimeout(timer);
      history = [];
      const gated = sale.admission === "queue" || sale.admission === "draw";
      saleId = gated ? sale.saleId : null;
      box.hidden = !gated;
      if (gated) poll(sale.saleId);
    },
  };
}

import { adminApi, adminToken, lock, setLockHandler, unlock } from "./admin-session.js";
import { mountAuditLog } from "./audit-log.js";
import { mountDeadLetters } from "./dead-letters.js";
import { byId } from "./dom.js";
import { mountLiveView } from "./live-view.js";
import { mountSaleForm } from "./sale-form.js";
import { mountSalesPanel } from "./sales-panel.js";
import { mountWebhooks } from "./webhooks.js";

/** The operator console: a token gate, then the sales list, the create form, the live view, dead letters. */
const LIST_REFRESH_MS = 3000;
let sales = [];
let listTimer = null;

const live = mountLiveView({ onSaleChanged: () => refreshSales() });
const panel = mountSalesPanel({ onSelect: (sale) => live.show(sale) });
const deadLetters = mountDeadLetters();
const webhooks = mountWebhooks();
const auditLog = mountAuditLog();
mountSaleForm({
  onCreated: async (sale) => {
    panel.select(sale.saleId);
    live.show(sale);
    await refreshSales();
  },
});

async function refreshSales() {
  const r = await adminApi("/sales");
  if (!r.ok) return;
  sales = r.data.sales;
  panel.render(sales);
  const current = sales.find((s) => s.saleId === live.saleId);
  if (current) live.update(current);
}

function showConsole(open) {
  byId("gate").hidden = open;
  byId("console").hidden = !open;
  byId("signout").hidden = !open;
  clearInterval(listTimer);
  if (open) {
    refreshSales();
    deadLetters.refresh();
    webhooks.refresh();
    auditLog.refresh();
    listTimer = setInterval(refreshSales, LIST_REFRESH_MS);
  } else {
    live.stop();
    byId("admin-token").focus();
  }
}

setLockHandler(() => showConsole(false));

byId("gate-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const input = byId("admin-token");
  const error = byId("gate-error");
  const token = input.value.trim();
  if (!token) {
    error.textContent = "Enter the operator token.";
    return;
  }
  const r = await unlock(token);
  if (r.ok) {
    error.textContent = "";
    input.value = "";
    input.removeAttribute("aria-invalid");
    showConsole(true);
  } else {
    input.setAttribute("aria-invalid", "true");
    error.textContent =
      r.status === 401 ? "That token was not accepted." : r.error.message || "Could not reach the API.";
  }
});

byId("signout").addEventListener("click", lock);
showConsole(Boolean(adminToken()));

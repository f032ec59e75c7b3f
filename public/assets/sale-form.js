import { adminApi } from "./admin-session.js";
import { serverNow } from "./clock.js";
import { byId } from "./dom.js";
import { mountVariantRows } from "./variant-rows.js";

const FIELDS = [
  "name",
  "productId",
  "priceCents",
  "stock",
  "perUserLimit",
  "paymentWindowSeconds",
  "startsAt",
  "endsAt",
  "admission",
  "proofOfWork",
  "description",
  "imageUrl",
];
const INPUT_OF = {
  name: "f-name",
  productId: "f-productId",
  priceCents: "f-price",
  stock: "f-stock",
  perUserLimit: "f-perUserLimit",
  paymentWindowSeconds: "f-window",
  startsAt: "f-startsAt",
  endsAt: "f-endsAt",
  admission: "f-admission",
  proofOfWork: "f-proofOfWork",
  description: "f-description",
  imageUrl: "f-imageUrl",
};

/**
 * The server's validation message for a field. The server words them for operators; only the fields
 * this form shows in other units (dollars, minutes) get their own sentence.
 */
export function friendlyFieldError(field, message) {
  if (field === "priceCents")
    return /number|^enter/i.test(message) ? "Enter a price." : "Enter a price from $0 to $10,000,000.";
  if (field === "paymentWindowSeconds") return "Between 1 minute and 7 days.";
  return message;
}

/** A datetime-local value ("2026-11-21T14:05:00") for a time, in the browser's zone. */
function localInputValue(ms) {
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60_000);
  return d.toISOString().slice(0, 19);
}

function numberOrRaw(value, scale = 1) {
  if (value.trim() === "") return undefined;
  const n = Number(value);
  return Number.isFinite(n) ? Math.round(n * scale) : value;
}

function isoOrRaw(value) {
  if (!value) return undefined;
  const ms = new Date(value).getTime();
  return Number.isNaN(ms) ? value : new Date(ms).toISOString();
}

/**
 * The create-sale form: sends `POST /api/admin/sales` and shows each field's error from the 400
 * (`error.fields`) next to its input; a 409 CONFLICT goes next to the product id. `onCreated(sale)`.
 * With variant rows the body carries `variants` instead of the sale's own price and stock.
 */
export function mountSaleForm({ onCreated }) {
  const form = byId("sale-form");
  const status = byId("form-status");
  const button = byId("create-button");
  const value = (id) => byId(id).value;
  const rows = mountVariantRows({
    start: () => ({ variantId: "", priceCents: value("f-price"), stock: value("f-stock") }),
    onChange: (count) => {
      byId("price-field").hidden = count > 0;
      byId("stock-field").hidden = count > 0;
    },
  });

  function defaults() {
    const start = Math.ceil((serverNow() + 5 * 60_000) / 60_000) * 60_000;
    byId("f-startsAt").value = localInputValue(start);
    byId("f-endsAt").value = localInputValue(start + 3600_000);
  }

  function showErrors(fields) {
    for (const field of FIELDS) {
      const message = fields[field];
      byId(`e-${field}`).textContent = message ? friendlyFieldError(field, message) : "";
      byId(INPUT_OF[field]).setAttribute("aria-invalid", String(Boolean(message)));
    }
    // with variant rows the sale's own price and stock are hidden: their errors show with the variants
    const hiddenField = rows.count() > 0 ? (fields.priceCents ?? fields.stock) : undefined;
    byId("e-variants").textContent = fields.variants ?? hiddenField ?? "";
    const firstRow = rows.showErrors(fields, friendlyFieldError);
    const first = FIELDS.find((f) => fields[f]);
    if (first) byId(INPUT_OF[first]).focus();
    else firstRow?.focus();
  }

  /** The variant rows as the body's `variants` (prices in cents; empty optional inputs left out). */
  function variants() {
    return rows.values().map((v) => ({
      variantId: v.variantId,
      name: v.name,
      priceCents: numberOrRaw(v.priceCents, 100),
      stock: numberOrRaw(v.stock),
      perUserLimit: numberOrRaw(v.perUserLimit),
      description: v.description || undefined,
      imageUrl: v.imageUrl || undefined,
    }));
  }

  function say(text, tone) {
    status.textContent = text;
    status.dataset.tone = tone;
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = {
      name: value("f-name"),
      productId: value("f-productId"),
      priceCents: numberOrRaw(value("f-price"), 100),
      stock: numberOrRaw(value("f-stock")),
      perUserLimit: numberOrRaw(value("f-perUserLimit")),
      paymentWindowSeconds: numberOrRaw(value("f-window"), 60),
      startsAt: isoOrRaw(value("f-startsAt")),
      endsAt: isoOrRaw(value("f-endsAt")),
      admission: value("f-admission"),
      proofOfWork: byId("f-proofOfWork").checked,
      description: value("f-description").trim() || undefined,
      imageUrl: value("f-imageUrl").trim() || undefined,
    };
    if (rows.count() > 0) {
      body.priceCents = undefined;
      body.stock = undefined;
      body.variants = variants();
    }
    button.disabled = true;
    say("Creating…", "info");
    const r = await adminApi("/sales", { method: "POST", body });
    button.disabled = false;
    if (r.ok) {
      showErrors({});
      say(`Created “${r.data.name}”.`, "ok");
      form.reset();
      rows.clear();
      defaults();
      onCreated(r.data);
    } else if (r.error.code === "INVALID_REQUEST" && r.error.fields) {
      showErrors(r.error.fields);
      say("Check the highlighted fields.", "error");
    } else if (r.error.code === "CONFLICT") {
      showErrors({ productId: "This product already has a sale. Use another product id." });
      say("Not created.", "error");
    } else {
      say(r.error.message || "Could not create the sale.", "error");
    }
  });

  byId("starts-now").addEventListener("click", () => {
    const now = serverNow();
    byId("f-startsAt").value = localInputValue(now);
    if (new Date(value("f-endsAt")).getTime() <= now)
      byId("f-endsAt").value = localInputValue(now + 3600_000);
  });

  defaults();
}

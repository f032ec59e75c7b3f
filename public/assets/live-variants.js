import { drawVariantChart } from "./charts.js";
import { byId, h, setText } from "./dom.js";
import { formatInt } from "./format.js";
import { hasChoice, variantsOf } from "./variants.js";

/**
 * The live view's parts for a sale of several variants: the stock form's choice of variant, and the
 * chart of each variant (paid, held, left) from the stats' `variants`. Both stay hidden for a sale of one.
 */

/** The stock form's variant choice (its options rebuilt only when the variants change). */
export function renderVariantSelect(sale) {
  const select = byId("stock-variant");
  const variants = hasChoice(sale) ? variantsOf(sale) : [];
  select.hidden = variants.length === 0;
  const key = variants.map((v) => `${v.variantId}\t${v.name}`).join("\n");
  if (select.dataset.key === key) return;
  select.dataset.key = key;
  const picked = select.value;
  select.replaceChildren(...variants.map((v) => h("option", { value: v.variantId }, v.name)));
  if (variants.some((v) => v.variantId === picked)) select.value = picked;
}

/** The variant to adjust, or undefined on a sale of one (the body then carries no `variantId`). */
export function selectedVariant() {
  const select = byId("stock-variant");
  return select.hidden ? undefined : select.value;
}

/** Each variant's bar, from the latest `stats` with the sale's names for the variant ids. */
export function renderVariantStats(sale, stats) {
  const box = byId("variants-box");
  const rows = stats && hasChoice(sale) && Array.isArray(stats.variants) ? stats.variants : [];
  box.hidden = rows.length === 0;
  if (rows.length === 0) return;
  const names = new Map(variantsOf(sale).map((v) => [v.variantId, v.name]));
  const named = rows.map((r) => ({ ...r, name: names.get(r.variantId) ?? r.variantId }));
  const gone = named.filter((r) => r.remaining <= 0).length;
  setText(byId("variants-caption"), gone ? `${formatInt(gone)} of ${formatInt(rows.length)} sold out` : "");
  drawVariantChart(byId("variant-chart"), named);
}

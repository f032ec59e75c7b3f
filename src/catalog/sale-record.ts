/** How a sale lets shoppers buy: everyone at once, through a waiting room, or by a draw (src/room/). */
export type AdmissionMode = "open" | "queue" | "draw";

/**
 * One variant of a drop (a size, a tier, a colour): what the operator defined. A sale made without
 * variants has one, `"default"`, with the sale's name and price.
 */
export type VariantDefinition = {
  variantId: string;
  name: string;
  priceCents: number;
  /** caps this variant's units per shopper, under the sale's `perUserLimit` */
  perUserLimit?: number;
  description?: string;
  imageUrl?: string;
};

/** A variant with its live units: for a sale of several, Redis keeps them per variant (`vstock`). */
export type VariantRecord = VariantDefinition & { remaining: number };

/** The variant id of a sale made without variants. */
export const DEFAULT_VARIANT = "default";

/** A sale as the worker sees it: the Redis-preheated copy of the Postgres row plus the live stock. */
export type SaleRecord = {
  saleId: string;
  productId: string;
  name: string;
  priceCents: number;
  perUserLimit: number;
  startsAt: number;
  endsAt: number;
  paused: boolean;
  paymentWindowMs: number;
  /** initial stock + adjustments */
  stock: number;
  initialStock: number;
  remaining: number;
  productToken: string;
  /** paused until then (ms) while a rebuild from Postgres settles; 0 otherwise */
  recoveringUntil?: number;
  /** "open" when absent (sales made before admission modes) */
  admission?: AdmissionMode;
  /** joining the room asks for an ALTCHA proof of work */
  proofOfWork?: boolean;
  description?: string;
  imageUrl?: string;
  /**
   * 1 to 50, in the operator's order; their `remaining` adds up to the sale's. Absent: the one variant
   * `"default"` with the sale's name, price and units ({@link variantsOfSale}).
   */
  variants?: VariantRecord[];
};

/** The contract's variant in a `Sale`. */
export type VariantView = {
  variantId: string;
  name: string;
  priceCents: number;
  remaining: number;
  status: SaleStatus;
  perUserLimit?: number;
  description?: string;
  imageUrl?: string;
};

export type SaleStatus = "upcoming" | "live" | "sold_out" | "ended" | "paused";

/** The contract's `Sale` body. */
export type SaleView = {
  saleId: string;
  name: string;
  priceCents: number;
  perUserLimit: number;
  startsAt: string;
  endsAt: string;
  status: SaleStatus;
  remaining: number;
  stock: number;
  paymentWindowSeconds: number;
  serverTime: string;
  productToken?: string;
  admission: AdmissionMode;
  proofOfWork: boolean;
  description?: string;
  imageUrl?: string;
  variants: VariantView[];
};

/** The `Sale` operators see: the product token always present. */
export type OperatorSaleView = SaleView & { productToken: string };

/** Status from the window, the pause flag and the stock, in that order. */
export function saleStatus(sale: SaleRecord, now: number): SaleStatus {
  if (now >= sale.endsAt) return "ended";
  if (now < sale.startsAt) return "upcoming";
  if (sale.paused || now < (sale.recoveringUntil ?? 0)) return "paused";
  if (sale.remaining <= 0) return "sold_out";
  return "live";
}

/**
 * Renders a sale. Shoppers see the product token only while the sale is live (the purchase URL is not
 * known before it opens); operators always see it.
 */
export function toSaleView(sale: SaleRecord, now: number, audience: "operator"): OperatorSaleView;
export function toSaleView(sale: SaleRecord, now: number, audience: "shopper"): SaleView;
export function toSaleView(sale: SaleRecord, now: number, audience: "shopper" | "operator"): SaleView {
  const status = saleStatus(sale, now);
  const view: SaleView = {
    saleId: sale.saleId,
    name: sale.name,
    priceCents: sale.priceCents,
    perUserLimit: sale.perUserLimit,
    startsAt: new Date(sale.startsAt).toISOString(),
    endsAt: new Date(sale.endsAt).toISOString(),
    status,
    remaining: Math.max(0, sale.remaining),
    stock: sale.stock,
    paymentWindowSeconds: Math.round(sale.paymentWindowMs / 1000),
    serverTime: new Date(now).toISOString(),
    admission: sale.admission ?? "open",
    proofOfWork: sale.proofOfWork ?? false,
    variants: variantsOfSale(sale).map((v) => variantView(v, status)),
  };
  if (sale.description) view.description = sale.description;
  if (sale.imageUrl) view.imageUrl = sale.imageUrl;
  if (audience === "operator" || status === "live") view.productToken = sale.productToken;
  return view;
}

/** A variant as `Sale` shows it: `sold_out` while the sale is live and the variant has nothing left. */
function variantView(v: VariantRecord, saleStatus: SaleStatus): VariantView {
  const remaining = Math.max(0, v.remaining);
  const view: VariantView = {
    variantId: v.variantId,
    name: v.name,
    priceCents: v.priceCents,
    remaining,
    status: saleStatus === "live" && remaining <= 0 ? "sold_out" : saleStatus,
  };
  if (v.perUserLimit !== undefined) view.perUserLimit = v.perUserLimit;
  if (v.description) view.description = v.description;
  if (v.imageUrl) view.imageUrl = v.imageUrl;
  return view;
}

/** A sale's variants; a record without them is a sale of one, `"default"`. */
export function variantsOfSale(
  sale: Pick<SaleRecord, "variants" | "name" | "priceCents" | "remaining">,
): VariantRecord[] {
  if (sale.variants && sale.variants.length > 0) return sale.variants;
  return [
    { variantId: DEFAULT_VARIANT, name: sale.name, priceCents: sale.priceCents, remaining: sale.remaining },
  ];
}

/** A sale of several variants keeps each one's units (`vstock`) and holdings (`vholdings`) in Redis. */
export function tracksVariants(sale: Pick<SaleRecord, "variants">): boolean {
  return (sale.variants?.length ?? 0) > 1;
}

/** The Redis meta hash fields for a sale (strings, as Redis stores them). */
export function toMetaFields(
  sale: Omit<SaleRecord, "remaining" | "variants"> & { variants?: VariantDefinition[] },
): Record<string, string> {
  const fields: Record<string, string> = {
    saleId: sale.saleId,
    productId: sale.productId,
    name: sale.name,
    priceCents: String(sale.priceCents),
    perUserLimit: String(sale.perUserLimit),
    startsAt: String(sale.startsAt),
    endsAt: String(sale.endsAt),
    paused: sale.paused ? "1" : "0",
    paymentWindowMs: String(sale.paymentWindowMs),
    stock: String(sale.stock),
    initialStock: String(sale.initialStock),
    productToken: sale.productToken,
    admission: sale.admission ?? "open",
    proofOfWork: sale.proofOfWork ? "1" : "0",
    epoch: "1",
  };
  if (sale.variants) {
    fields.variants = JSON.stringify(sale.variants.map(variantDefinition));
    // read by reserve-stock.lua: a drop of several is never bought without its lines
    fields.variantCount = String(sale.variants.length);
  }
  if (sale.description) fields.description = sale.description;
  if (sale.imageUrl) fields.imageUrl = sale.imageUrl;
  return fields;
}

/** A variant's definition only (what Redis and Postgres keep of it; its units live elsewhere). */
export function variantDefinition(v: VariantDefinition): VariantDefinition {
  const d: VariantDefinition = { variantId: v.variantId, name: v.name, priceCents: v.priceCents };
  if (v.perUserLimit !== undefined) d.perUserLimit = v.perUserLimit;
  if (v.description) d.description = v.description;
  if (v.imageUrl) d.imageUrl = v.imageUrl;
  return d;
}

/**
 * The variants of a meta hash with their units: for a sale of several, from its `vstock` hash; a sale of
 * one (or one made before variants, with no `variants` field) has the sale's units.
 */
function variantsOf(
  meta: Record<string, string>,
  remaining: number,
  variantStock: Record<string, string> | null | undefined,
): VariantRecord[] {
  const defined = variantDefinitionsOf(meta.variants, meta.name ?? "", meta.priceCents);
  if (defined.length === 1) return [{ ...(defined[0] as VariantDefinition), remaining }];
  return defined.map((v) => ({ ...v, remaining: Number(variantStock?.[v.variantId] ?? 0) }));
}

/**
 * The variants a meta hash's `variants` field defines; without one (a sale made before variants, or
 * without them), or unreadable, the one variant `default` with the sale's name and price.
 */
export function variantDefinitionsOf(
  stored: string | null | undefined,
  name: string,
  priceCents: string | null | undefined,
): VariantDefinition[] {
  try {
    const parsed: unknown = stored ? JSON.parse(stored) : null;
    if (Array.isArray(parsed) && parsed.length > 0) return parsed as VariantDefinition[];
  } catch {
    // unreadable: as if absent
  }
  return [{ variantId: DEFAULT_VARIANT, name, priceCents: Number(priceCents ?? 0) }];
}

/** Reads the meta hash and stock back into a record; null when the sale is not in Redis. */
export function fromMetaFields(
  meta: Record<string, string> | null,
  remaining: string | null,
  variantStock?: Record<string, string> | null,
): SaleRecord | null {
  if (!meta?.saleId) return null;
  const record: SaleRecord = {
    saleId: meta.saleId,
    productId: meta.productId ?? "",
    name: meta.name ?? "",
    priceCents: Number(meta.priceCents),
    perUserLimit: Number(meta.perUserLimit),
    startsAt: Number(meta.startsAt),
    endsAt: Number(meta.endsAt),
    paused: meta.paused === "1",
    paymentWindowMs: Number(meta.paymentWindowMs),
    stock: Number(meta.stock),
    initialStock: Number(meta.initialStock),
    remaining: Number(remaining ?? 0),
    productToken: meta.productToken ?? "",
    recoveringUntil: Number(meta.recoveringUntil ?? 0),
    admission: admissionOf(meta.admission),
    proofOfWork: meta.proofOfWork === "1",
    variants: variantsOf(meta, Number(remaining ?? 0), variantStock),
  };
  if (meta.description) record.description = meta.description;
  if (meta.imageUrl) record.imageUrl = meta.imageUrl;
  return record;
}

/** A stored admission mode; "open" for anything else (sales made before the modes). */
export function admissionOf(value: string | null | undefined): AdmissionMode {
  return value === "queue" || value === "draw" ? value : "open";
}

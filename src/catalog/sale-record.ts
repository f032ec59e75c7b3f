/** How a sale lets shoppers buy: everyone at once, through a waiting room, or by a draw (src/admission/). */
export type AdmissionMode = "open" | "queue" | "draw";

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
  };
  if (audience === "operator" || status === "live") view.productToken = sale.productToken;
  return view;
}

/** The Redis meta hash fields for a sale (strings, as Redis stores them). */
export function toMetaFields(sale: Omit<SaleRecord, "remaining">): Record<string, string> {
  return {
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
}

/** Reads the meta hash and stock back into a record; null when the sale is not in Redis. */
export function fromMetaFields(
  meta: Record<string, string> | null,
  remaining: string | null,
): SaleRecord | null {
  if (!meta?.saleId) return null;
  return {
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
  };
}

/** A stored admission mode; "open" for anything else (sales made before the modes). */
export function admissionOf(value: string | null | undefined): AdmissionMode {
  return value === "queue" || value === "draw" ? value : "open";
}

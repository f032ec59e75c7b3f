import { openRoom } from "../admission/open-room";
import { registerProductToken } from "../catalog/catalog";
import { productToken } from "../catalog/product-token";
import type { AdmissionMode, SaleRecord } from "../catalog/sale-record";
import { toMetaFields } from "../catalog/sale-record";
import { findSaleByToken, insertSale } from "../catalog/sale-repository";
import { newSaleId } from "../ids";
import { recoverLostSales } from "../recovery/recover-sales";
import type { RebuildDeps } from "../services";
import { initSale } from "../stock/preheat";

/** What an operator defines: times in ms since the epoch, checked at the edge (api/admin-schemas.ts). */
export type SaleDefinition = {
  productId: string;
  name: string;
  priceCents: number;
  stock: number;
  perUserLimit: number;
  startsAt: number;
  endsAt: number;
  paymentWindowSeconds: number;
  admission?: AdmissionMode;
  proofOfWork?: boolean;
};

export type CreateSaleOutcome =
  | { kind: "created"; sale: SaleRecord }
  /** the product already has a sale (its token is the product's): `saleId` is that sale, if found */
  | { kind: "product_taken"; saleId: string | null };

/**
 * Creates a sale: written to Postgres first (the source of truth; one sale per product token), then
 * preheated into Redis and its product token added to the catalog. A product that already has a sale
 * is an outcome; Redis may then be missing that sale (a lost Redis), so a recovery is run.
 *
 * @example
 * const outcome = await createSale(deps, { productId: "hoodie", name: "Hoodie", priceCents: 7900, … });
 * if (outcome.kind === "product_taken") return conflict(outcome.saleId);
 */
export async function createSale(deps: RebuildDeps, definition: SaleDefinition): Promise<CreateSaleOutcome> {
  const token = await productToken(deps.config.PRODUCT_TOKEN_SECRET, definition.productId);
  const record = {
    saleId: newSaleId(),
    productId: definition.productId,
    name: definition.name,
    priceCents: definition.priceCents,
    perUserLimit: definition.perUserLimit,
    startsAt: definition.startsAt,
    endsAt: definition.endsAt,
    paused: false,
    paymentWindowMs: definition.paymentWindowSeconds * 1000,
    stock: definition.stock,
    initialStock: definition.stock,
    productToken: token,
    admission: definition.admission ?? "open",
    proofOfWork: definition.proofOfWork ?? false,
  };
  if (!(await insertSale(deps.db, record))) {
    const existing = await findSaleByToken(deps.db, token);
    await recoverLostSales(deps);
    return { kind: "product_taken", saleId: existing?.id ?? null };
  }
  // the room's seed first: no step may find the sale without it (it would draw with an empty seed)
  if (record.admission !== "open") await openRoom(deps.redis, record.saleId);
  await initSale(deps.redis, record.saleId, toMetaFields(record));
  await registerProductToken(deps, record.saleId, token);
  return { kind: "created", sale: { ...record, remaining: record.stock } };
}

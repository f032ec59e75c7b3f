import { registerProductToken } from "../catalog/catalog";
import { productToken } from "../catalog/product-token";
import type { AdmissionMode, SaleRecord } from "../catalog/sale-record";
import { toMetaFields } from "../catalog/sale-record";
import { findSaleByToken, insertSale, type VariantInput } from "../catalog/sale-repository";
import type { AuditActor } from "../db/audit-log";
import { newSaleId } from "../ids";
import { recoverCatalogFirst, recoverLostSales } from "../recovery/recover-sales";
import { openRoom } from "../room/open-room";
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
  description?: string;
  imageUrl?: string;
  /** a drop of 1 to 50 variants; `priceCents` is then the lowest price and `stock` the sum */
  variants?: VariantInput[];
};

export type CreateSaleOutcome =
  | { kind: "created"; sale: SaleRecord }
  /** the product already has a sale (its token is the product's): `saleId` is that sale, if found */
  | { kind: "product_taken"; saleId: string | null };

/** A drop of several variants keeps each one's units in Redis; a sale of one keeps only the sale's. */
function variantStockOf(variants: VariantInput[] | undefined): Record<string, number> | undefined {
  if (!variants || variants.length < 2) return undefined;
  return Object.fromEntries(variants.map((v) => [v.variantId, v.stock]));
}

/**
 * Creates a sale: written to Postgres first (the source of truth; one sale per product token), then
 * preheated into Redis and its product token added to the catalog. A product that already has a sale
 * is an outcome; Redis may then be missing that sale (a lost Redis), so a recovery is run. With the
 * operator (`actor`), the audit entry `sale.create` is written in the sale's own transaction.
 *
 * @example
 * const outcome = await createSale(deps, { productId: "hoodie", name: "Hoodie", priceCents: 7900, … });
 * if (outcome.kind === "product_taken") return conflict(outcome.saleId);
 */
export async function createSale(
  deps: RebuildDeps,
  definition: SaleDefinition,
  actor?: AuditActor,
): Promise<CreateSaleOutcome> {
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
    ...(definition.description ? { description: definition.description } : {}),
    ...(definition.imageUrl ? { imageUrl: definition.imageUrl } : {}),
    ...(definition.variants ? { variants: definition.variants } : {}),
  };
  const audit = actor && {
    ...actor,
    action: "sale.create" as const,
    saleId: record.saleId,
    after: {
      ...definition,
      startsAt: new Date(definition.startsAt).toISOString(),
      endsAt: new Date(definition.endsAt).toISOString(),
    },
  };
  if (!(await insertSale(deps.db, record, audit))) {
    const existing = await findSaleByToken(deps.db, token);
    await recoverLostSales(deps);
    // a creation cut off after its Redis steps ran unanswered (a timeout, a script no replica
    // acknowledged) left a sale whose token the catalog may not hold: a recovery does not see it (the
    // sale and the catalog are there), so the operator's retry registers it (idempotent)
    if (existing) await registerProductToken(deps, existing.id, token);
    return { kind: "product_taken", saleId: existing?.id ?? null };
  }
  // the room's seed first: no step may find the sale without it (it would draw with an empty seed)
  if (record.admission !== "open") await openRoom(deps, record.saleId);
  await initSale(deps.redis, record.saleId, toMetaFields(record), variantStockOf(definition.variants));
  await recoverCatalogFirst(deps);
  await registerProductToken(deps, record.saleId, token);
  return {
    kind: "created",
    sale: {
      ...record,
      remaining: record.stock,
      variants: definition.variants?.map((v) => ({ ...v, remaining: v.stock })),
    },
  };
}

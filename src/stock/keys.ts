/**
 * Redis key names. Every key of one sale shares the hash tag `{s:<saleId>}`, so a script touching them
 * stays in one cluster slot. Scripts never build keys: they receive these in KEYS.
 */
export function saleKeys(saleId: string) {
  const p = `sale:{s:${saleId}}`;
  return {
    meta: `${p}:meta`,
    stock: `${p}:stock`,
    holdings: `${p}:holdings`,
    /** a sale of several variants: variantId -> units remaining (they add up to `stock`) */
    variantStock: `${p}:vstock`,
    /** a sale of several variants: "<variantId>:<userId>" -> units held (variant ids hold no ":") */
    variantHoldings: `${p}:vholdings`,
    ledger: `${p}:ledger`,
    orders: `${p}:orders`,
    outbox: `${p}:outbox`,
    timeline: `${p}:timeline`,
    /** counter: one more with each read a sale's webhook event describes (src/webhooks/sale-snapshot.ts) */
    eventReads: `${p}:event-reads`,
    /** where the incremental reconciliation stopped: its ledger cursor and its last order checked */
    reconcile: `${p}:reconcile`,
    /** the waiting room of a queue or draw sale (src/room/): its state, tickets, line and admissions */
    room: `${p}:q:room`,
    tickets: `${p}:q:tickets`,
    line: `${p}:q:line`,
    late: `${p}:q:late`,
    active: `${p}:q:active`,
    entries: `${p}:q:entries`,
    /** what changed in the room and is not yet in Postgres: member -> journal position (src/room/room-record.ts) */
    journal: `${p}:q:journal`,
    /** a room restored from Postgres is staged under these (one set per restore) before room-restore.lua */
    staged: (nonce: string) => ({
      tickets: `${p}:q:staged:${nonce}:tickets`,
      lists: `${p}:q:staged:${nonce}:lists`,
    }),
    /** a short lease: one caller at a time reads and ranks the line to seal it (src/room/room.ts) */
    sealing: `${p}:q:sealing`,
    /** Length-prefixed user id: no two (user, key) pairs share a name, whatever characters they hold. */
    idempotency: (userId: string, key: string) => `${p}:idem:${userId.length}:${userId}:${key}`,
    userRate: (userId: string) => `${p}:rl:u:${userId}`,
    ipRate: (ip: string) => `${p}:rl:ip:${ip}`,
  };
}

export type SaleKeys = ReturnType<typeof saleKeys>;

/**
 * Catalog keys, shared by all sales: the set of sale ids, token -> sale id, the Bloom filter, its version.
 * They share the hash tag `{catalog}`: on a Redis Cluster they live on one master, so they are lost
 * together (a loss is seen by the missing version) and a filter and its version are written in one place.
 */
export const catalogKeys = {
  sales: "catalog:{catalog}:sales",
  tokens: "catalog:{catalog}:tokens",
  bloom: "catalog:{catalog}:bloom",
  version: "catalog:{catalog}:version",
  /** held while lost sales are rebuilt from Postgres (src/recovery/recover-sales.ts) */
  restoring: "catalog:{catalog}:recovery-lock",
} as const;

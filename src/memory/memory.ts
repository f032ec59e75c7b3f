import type { BloomFilter } from "bloom-filters";
import type { AdmissionMode, SaleRecord, VariantDefinition } from "../catalog/sale-record";
import type { KeySetEntry } from "../identity/key-set";
import type { OrderView } from "../orders/order-view";
import type { QueuedOrder } from "../stock/queued-order";
import type { RoomState } from "../stock/room-step";
import { type Frame, keepOrder, keepSame, type WatchedOrder } from "./frame";
import { createLru, type Lru } from "./lru";
import { createRateCounters, type RateCounters } from "./rate-counters";
import { createSharedSnapshot, type SharedSnapshot } from "./shared-snapshot";
import { createSoldOutMemory, type SoldOutMemory } from "./sold-out";
import { createStreamBudgets, type StreamBudgets } from "./stream-budgets";
import { createVerifiedTokens, type VerifiedTokens } from "./verified-tokens";

/**
 * The catalog as this process loaded it: the Bloom filter of product tokens and its version, and, for a
 * catalog small enough, every token with its sale (`exact`: looked up instead of the filter).
 * `partial`: loaded while lost sales were being restored, or held when this process saw Redis lose data,
 * so a token missing from it may be a sale's (it is looked up: src/catalog/catalog.ts).
 */
export type LoadedCatalog = {
  filter: BloomFilter | null;
  version: string;
  checkedAt: number;
  partial: boolean;
  exact?: Map<string, string> | null;
};

/**
 * What one isolate (Workers) or process (Deno, Bun) remembers between requests, in one object built
 * beside the services and handed to every request with them: nothing of it lives in module state, so a
 * test builds a fresh one instead of resetting modules. Every field holds FINISHED values only (never a
 * promise another request would await: workerd cancels such requests, see STYLE.md).
 *
 * What is only a function of constant input stays with its function (the parsed bindings, the OpenAPI
 * document, an imported HMAC key): recomputing it gives the same value.
 */
export type Memory = {
  /** sales seen sold out: 410 without a Redis command (src/buy/attempt.ts) */
  soldOut: SoldOutMemory;
  /** 410s answered from `soldOut`, per sale and unix second, not yet in the timeline (src/buy/sold-out-answers.ts) */
  soldOutAnswers: { pending: Map<string, Map<number, number>>; flushedAt: number; flushScheduled: boolean };
  /** the product-token catalog and the tokens resolved through it (src/catalog/catalog.ts) */
  catalog: { loaded: LoadedCatalog | null; resolved: Map<string, { saleId: string | null; until: number }> };
  /** how far the store's clock is from this process's (src/stores/store-clock.ts) */
  storeClock: { offset: { ms: number; measuredAt: number } | null };
  /** when this process last started a recovery (src/recovery/recover-sales.ts) */
  recovery: { lastAttemptAt: number };
  /** the batch of reserved orders being gathered for one publish (src/orders/publish-buffer.ts) */
  publishing: { open: { orders: QueuedOrder[] } | null };
  /**
   * the sale list shoppers poll, kept half a second; when a request began re-reading it (the others
   * answer from the list in hand meanwhile); bumped by each operator change here: src/catalog/sale-store.ts
   */
  saleList: {
    /**
     * `lost`: ids the catalog lists that Redis holds no sale for (lost with their store, being rebuilt);
     * `catalogMissing`: the catalog's version was gone (the catalog lost, or none made yet)
     */
    cached: { at: number; sales: SaleRecord[]; lost: string[]; catalogMissing?: boolean } | null;
    refreshingSince: number | null;
    generation: number;
    /** sales found lost by a read of their own (listed in the catalog, not in Redis), and when */
    lostSeen: Lru<number>;
  };
  /** orders seen in a final status (paid, expired, cancelled), which never change: src/orders/order-reads.ts */
  finalOrders: Lru<{ userId: string; view: OrderView }>;
  /** requests per user and per client address to each shopper route, this window: src/limits/route-limits.ts */
  limits: RateCounters;
  /** one upstream feed per kind of stream, whatever the number of watchers (src/realtime/) */
  feeds: {
    sales: SharedSnapshot<Frame>;
    saleList: SharedSnapshot<Frame>;
    orders: SharedSnapshot<WatchedOrder>;
    stats: SharedSnapshot<Frame>;
  };
  /** the open event streams, in their budgets (src/responses/event-streams.ts) */
  streams: StreamBudgets;
  /** each sale's admission mode once read (it never changes): the buy's 403 before a stock command (src/room/) */
  admissionModes: Map<string, AdmissionMode>;
  /** each sale's variants once read (they never change): a cart's lines are checked before a stock command (src/buy/cart.ts) */
  saleVariants: Map<string, VariantDefinition[]>;
  /**
   * each waiting room's journal position known written to Postgres, and when a request of this process
   * began writing it (0: none is): the others wait on the number, not on that request (src/room/room-record.ts)
   */
  roomRecords: Map<string, { gen: number; through: number; writingSince: number; writes: number }>;
  /** when this process last failed to write a room's journal: its steps admit nobody for a while (src/room/room-record.ts) */
  roomRecordFailedAt: Map<string, number>;
  /** one upstream feed of each watched waiting room (src/realtime/room-feed.ts) */
  rooms: SharedSnapshot<RoomReading>;
  /** the shop's key set (JWKS) by URL: its keys as last fetched, when a read last failed (src/identity/key-set.ts) */
  keySets: Map<string, KeySetEntry>;
  /** shopper tokens verified here, by their text: a retry skips the HMAC (src/middleware/shopper-token.ts) */
  verifiedTokens: VerifiedTokens;
  /**
   * per sale, the stats' walk through Redis holdings, a chunk per reading: the cursor, the users over the
   * limit seen in this pass and in the last whole one (src/recovery/holding-scan.ts)
   */
  holdingScans: Map<string, { cursor: string; seen: Set<string>; last: Set<string> }>;
};

/** A waiting room as the feed last stepped it, with the store clock's reading then. */
export type RoomReading = { room: RoomState; at: number; sale: SaleRecord };

/**
 * Whether room state `a` was read before `b`: an earlier life of the room, or an earlier journal
 * position in the same life (every change of the frontier or the cutoff moves the position on). The
 * process clock cannot tell: a stream's own step and the feed's refresh run at once, and the one
 * stamped later may have reached Redis first.
 */
function roomBefore(a: RoomState, b: RoomState): boolean {
  return a.gen < b.gen || (a.gen === b.gen && a.seq < b.seq);
}

/** The rooms feed never goes back: a reading replaces the one held unless it was read before it. */
export const laterRoom = (held: RoomReading, next: RoomReading): boolean => !roomBefore(next.room, held.room);

/** How often the shopper feeds read the stores (from the settings). */
export type FeedTimings = { saleFeedMs: number; orderFeedMs: number };

/** The operator's figures are read at most once a second per process, however many pages watch. */
export const STATS_FEED_MS = 1_000;

/**
 * How long a stream that stopped ticking still holds its slot, for a runtime that drops a request
 * without its abort signal or cancel reaching the stream (a live stream ticks every ≤ 500 ms, or waits
 * ≤ 4 s on a blocked write before it drops itself). A disconnect normally frees the slot at once.
 */
const STREAM_SLOT_STALE_MS = 6_000;

/** Orders in a final status kept per process (a few hundred bytes each). */
const FINAL_ORDERS_KEPT = 5_000;
/** sales a read found lost with their store, remembered (src/catalog/sale-store.ts noticeIfLost) */
const LOST_SEEN_KEPT = 256;

/** Users and addresses whose requests this window are counted per process (about 100 bytes each). */
const LIMIT_KEYS_KEPT = 10_000;

/**
 * A fresh memory: built once per isolate or process (src/runtime/create-services.ts), and by each test that wants a
 * process of its own.
 *
 * @example
 * const memory = createMemory({ saleFeedMs: 250, orderFeedMs: 500 });
 */
export function createMemory(t: FeedTimings): Memory {
  return {
    soldOut: createSoldOutMemory(),
    soldOutAnswers: { pending: new Map(), flushedAt: 0, flushScheduled: false },
    catalog: { loaded: null, resolved: new Map() },
    storeClock: { offset: null },
    recovery: { lastAttemptAt: Number.NEGATIVE_INFINITY },
    publishing: { open: null },
    saleList: { cached: null, refreshingSince: null, generation: 0, lostSeen: createLru(LOST_SEEN_KEPT) },
    finalOrders: createLru(FINAL_ORDERS_KEPT),
    limits: createRateCounters(LIMIT_KEYS_KEPT),
    feeds: {
      sales: createSharedSnapshot<Frame>({ maxAgeMs: t.saleFeedMs, merge: keepSame }),
      saleList: createSharedSnapshot<Frame>({ maxAgeMs: t.saleFeedMs, merge: keepSame }),
      orders: createSharedSnapshot<WatchedOrder>({ maxAgeMs: t.orderFeedMs, merge: keepOrder }),
      stats: createSharedSnapshot<Frame>({ maxAgeMs: STATS_FEED_MS, merge: keepSame }),
    },
    streams: createStreamBudgets(STREAM_SLOT_STALE_MS),
    admissionModes: new Map(),
    roomRecords: new Map(),
    roomRecordFailedAt: new Map(),
    saleVariants: new Map(),
    rooms: createSharedSnapshot<RoomReading>({
      maxAgeMs: Math.min(t.saleFeedMs * 2, 500),
      later: laterRoom,
    }),
    keySets: new Map(),
    verifiedTokens: createVerifiedTokens(),
    holdingScans: new Map(),
  };
}

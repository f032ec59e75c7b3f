import { describe, expect, it } from "vitest";
import type { SaleRecord } from "../../src/catalog/sale-record";
import type { WatchedOrder } from "../../src/memory/frame";
import { type Frame, frameOf, keepOrder, keepSame } from "../../src/memory/frame";
import { createLeases } from "../../src/memory/leases";
import { laterRoom, type RoomReading } from "../../src/memory/memory";
import { createSharedSnapshot } from "../../src/memory/shared-snapshot";
import type { OrderView } from "../../src/orders/order-view";
import { firstEventId } from "../../src/realtime/event-ids";
import { ownFrame, watchedOrder } from "../../src/realtime/order-feed";
import { type EventSink, pumpEvents } from "../../src/realtime/pump";
import { saleFrame } from "../../src/realtime/sale-feed";

describe("the shared snapshot", () => {
  it("reads once per interval for all watched keys, however many streams ask", async () => {
    const snap = createSharedSnapshot<number>({ maxAgeMs: 250 });
    snap.watch("a", 0);
    snap.watch("b", 0);
    const loads: string[][] = [];
    const load = async (keys: string[]) => {
      loads.push(keys);
      return new Map(keys.map((k) => [k, loads.length]));
    };
    await Promise.all(Array.from({ length: 100 }, () => snap.refresh(1000, load)));
    await Promise.all(Array.from({ length: 100 }, () => snap.refresh(1100, load)));
    expect(loads).toEqual([["a", "b"]]);
    await snap.refresh(1250, load);
    expect(loads.length).toBe(2);
    expect(snap.get("a")).toBe(2);
  });

  it("never makes a stream wait for another stream's read: they keep the last finished value", async () => {
    const snap = createSharedSnapshot<string>({ maxAgeMs: 250 });
    snap.watch("a", 0);
    snap.put("a", "old", 0);
    let finish: (v: Map<string, string>) => void = () => {};
    const pending = snap.refresh(1000, () => new Promise((r) => (finish = r)));
    let otherDone = false;
    await snap.refresh(1300, async () => new Map([["a", "unexpected"]])).then(() => (otherDone = true));
    expect([otherDone, snap.get("a")]).toEqual([true, "old"]);
    finish(new Map([["a", "new"]]));
    await pending;
    expect(snap.get("a")).toBe("new");
  });

  it("takes over a read whose request vanished, and forgets keys nobody watches", async () => {
    const snap = createSharedSnapshot<string>({ maxAgeMs: 250, takeOverMs: 1000 });
    const lease = snap.watch("a", 0);
    void snap.refresh(0, () => new Promise(() => {}));
    await snap.refresh(2000, async () => new Map([["a", "x"]]));
    expect(snap.get("a")).toBe("x");
    lease.release();
    await snap.refresh(3000, async () => new Map());
    expect(snap.get("a")).toBeUndefined();
  });
});

const view = (orderId: string, status: OrderView["status"]): OrderView => ({
  orderId,
  saleId: "s1",
  quantity: 1,
  status,
  createdAt: "2026-01-01T00:00:00.000Z",
  expiresAt: "2026-01-01T00:10:00.000Z",
  items: [{ variantId: "default", name: "Sale", quantity: 1, priceCents: 100 }],
  amountCents: 100,
});

describe("the orders feed", () => {
  it("never goes back to an earlier status: a refresh that read before a stream's own read keeps the stream's", async () => {
    const feed = createSharedSnapshot<WatchedOrder>({ maxAgeMs: 250, merge: keepOrder });
    feed.watch("o", 0);
    feed.put("o", watchedOrder(view("o", "awaiting_payment"), "alice"), 900);
    await feed.refresh(1000, async () => new Map([["o", watchedOrder(view("o", "queued"), "alice")]]));
    expect(feed.get("o")?.frame.events[0]?.key).toBe("awaiting_payment");
    await feed.refresh(1300, async () => new Map([["o", watchedOrder(view("o", "paid"), "alice")]]));
    await feed.refresh(
      1600,
      async () => new Map([["o", watchedOrder(view("o", "awaiting_payment"), "alice")]]),
    );
    expect(feed.get("o")?.frame).toMatchObject({ final: true, events: [{ key: "paid" }] });
  });
});

describe("the rooms feed", () => {
  const reading = (gen: number, seq: number, frontier: number) =>
    ({ room: { gen, seq, frontier }, at: 0, sale: {} }) as unknown as RoomReading;

  it("never goes back: a refresh that reached Redis before a stream's own step keeps the stream's", async () => {
    const snap = createSharedSnapshot<RoomReading>({ maxAgeMs: 250, later: laterRoom });
    snap.watch("s", 0);
    // the stream's own step, stamped when its request began, saw the frontier at 10
    const own = reading(1, 7, 10);
    snap.put("s", own, 900);
    // a refresh stamped later (1000) had stepped the room before the first admissions
    await snap.refresh(1000, async () => new Map([["s", reading(1, 3, 0)]]));
    expect(snap.get("s")).toBe(own);
    // a later position, or the room's next life after a restore, replaces it
    await snap.refresh(1300, async () => new Map([["s", reading(1, 8, 12)]]));
    expect(snap.get("s")?.room.frontier).toBe(12);
    await snap.refresh(1600, async () => new Map([["s", reading(2, 1, 12)]]));
    expect(snap.get("s")?.room.gen).toBe(2);
  });
});

describe("leases", () => {
  it("count only streams that ticked recently (a dropped context frees its slot)", () => {
    const leases = createLeases(1000);
    const a = leases.take("s", 0);
    leases.take("s", 0);
    expect(leases.count(500)).toBe(2);
    a.touch(900);
    expect(leases.count(1500)).toBe(1);
  });
});

describe("pumpEvents", () => {
  const sink = (write: (t: string) => Promise<unknown>) => {
    const out = { open: true, aborted: false };
    const s: EventSink = {
      write,
      isOpen: () => out.open && !out.aborted,
      abort: () => {
        out.aborted = true;
      },
    };
    return { s, out };
  };
  const frame = (v: number, final = false) => frameOf([{ event: "sale", data: String(v) }], final);
  const base = { firstId: 7, tickMs: 1, pingMs: 1_000_000, writeTimeoutMs: 50 };

  it("writes the first frame, then only new versions, with increasing ids, and ends after a final frame", async () => {
    const written: string[] = [];
    const one = frame(1);
    const two = keepSame(one, frame(2));
    const three = keepSame(two, frame(3, true));
    const frames = [one, one, two, two, three];
    const { s } = sink(async (t) => written.push(t));
    const end = await pumpEvents(s, { ...base, first: one, current: () => frames.shift() ?? three });
    expect(end).toBe("final");
    expect(written).toEqual([
      "event: sale\nid: 7\ndata: 1\n\n",
      "event: sale\nid: 8\ndata: 2\n\n",
      "event: sale\nid: 9\ndata: 3\n\n",
    ]);
  });

  it("drops a reader whose write stays unfinished, without waiting for it or writing over it", async () => {
    let calls = 0;
    const { s, out } = sink(() => (++calls === 1 ? Promise.resolve() : new Promise(() => {})));
    let f = frame(0);
    const end = await pumpEvents(s, {
      ...base,
      first: f,
      current: () => {
        f = keepSame(f, frame(f.version + 1));
        return f;
      },
    });
    expect([end, out.aborted, calls]).toEqual(["slow", true, 2]);
  });

  it("lets the feed refresh with the stream's own read only when it is due", async () => {
    let refreshes = 0;
    let ticks = 0;
    const { s, out } = sink(async () => undefined);
    await pumpEvents(s, {
      ...base,
      first: frame(1),
      current: () => null,
      refresh: () => {
        if (++ticks === 5) out.open = false;
        if (ticks % 2) return undefined;
        refreshes++;
        return Promise.resolve();
      },
    });
    expect([ticks, refreshes]).toEqual([5, 2]);
  });

  it("numbers the first event above the client's Last-Event-ID and above the clock", () => {
    expect(firstEventId("5000", 1000)).toBe(5001);
    expect(firstEventId(undefined, 1000)).toBe(1000);
    expect(firstEventId("junk", 1000)).toBe(1000);
    expect(firstEventId("1e300", 1000)).toBeGreaterThan(10n ** 300n);
    expect(firstEventId("1000000000000000", 1000)).toBe(1_000_000_000_000_001);
    expect(firstEventId("9007199254740993", 1000)).toBe(9_007_199_254_740_994n);
    expect(firstEventId("123456789012345678901234567890", 1000)).toBe(123456789012345678901234567891n);
    expect(firstEventId("-5", 1000)).toBe(1000);
  });
});

describe("the frame memo (one serialized event per sale and version, shared by every stream)", () => {
  const sale: SaleRecord = {
    saleId: "s1",
    productId: "p1",
    name: "Sneaker",
    priceCents: 100,
    perUserLimit: 2,
    startsAt: 0,
    endsAt: 10_000_000,
    paused: false,
    paymentWindowMs: 600_000,
    stock: 10,
    initialStock: 10,
    remaining: 10,
    productToken: "tok",
  };
  const collect = () => {
    const written: string[] = [];
    const out = { open: true };
    const s: EventSink = {
      write: async (t) => written.push(t),
      isOpen: () => out.open,
      abort: () => {
        out.open = false;
      },
    };
    return { s, out, written };
  };

  it("renders a sale once per read: the same frame while only the clock moves, a new version when it changes", async () => {
    const feed = createSharedSnapshot<Frame>({ maxAgeMs: 250, merge: keepSame });
    feed.watch("s1", 0);
    let remaining = 10;
    let renders = 0;
    const load = async (ids: string[]) => {
      renders++;
      return new Map(ids.map((id) => [id, saleFrame({ ...sale, remaining }, 1_000 + renders)]));
    };
    await feed.refresh(1_000, load);
    const first = feed.get("s1");
    await feed.refresh(1_300, load);
    expect(feed.get("s1")).toBe(first);
    expect(first?.events[0]?.tail).toContain('"serverTime":"1970-01-01T00:00:01.001Z"');
    remaining = 8;
    await feed.refresh(1_600, load);
    const second = feed.get("s1");
    expect([second === first, second?.version, first?.version]).toEqual([false, 2, 1]);
    expect(second?.events[0]?.tail).toContain('"remaining":8');
  });

  it("gives every stream the same ready text: N streams, one render, one string per version", async () => {
    const feed = createSharedSnapshot<Frame>({ maxAgeMs: 250, merge: keepSame });
    feed.put("s1", saleFrame(sale, 1_000), 1_000);
    const streams = Array.from({ length: 3 }, collect);
    let ticks = 0;
    const runs = streams.map(({ s, out }, i) =>
      pumpEvents(s, {
        first: feed.get("s1") as Frame,
        firstId: 100 * i,
        current: () => {
          if (++ticks === 6) feed.put("s1", saleFrame({ ...sale, remaining: 3 }, 2_000), 2_000);
          if (ticks > 30) out.open = false;
          return feed.get("s1") ?? null;
        },
        tickMs: 1,
        pingMs: 1_000_000,
        writeTimeoutMs: 50,
      }),
    );
    await Promise.all(runs);
    const tails = streams.map(({ written }) => written.map((t) => t.slice(t.indexOf("\ndata: "))));
    expect(streams.map(({ written }) => written.length)).toEqual([2, 2, 2]);
    expect(new Set(tails.map((t) => t.join("|"))).size).toBe(1);
    expect(tails[0]?.[1]).toContain('"remaining":3');
    expect(streams[1]?.written.map((t) => t.split("\n")[1])).toEqual(["id: 100", "id: 101"]);
  });

  it("never writes one shopper's order on another shopper's stream", async () => {
    const feed = createSharedSnapshot<WatchedOrder>({ maxAgeMs: 250 });
    feed.put("o-alice", watchedOrder(view("o-alice", "queued"), "alice"), 0);
    feed.put("o-bob", watchedOrder(view("o-bob", "queued"), "bob"), 0);
    // bob asks for alice's order: the route answers 404 before a stream, as the feed shows him nothing
    expect(ownFrame(feed.get("o-alice"), "bob")).toBeUndefined();
    const bob = collect();
    let ticks = 0;
    await pumpEvents(bob.s, {
      first: ownFrame(feed.get("o-bob"), "bob") as Frame,
      firstId: 1,
      current: () => {
        ticks++;
        if (ticks === 2) feed.put("o-alice", watchedOrder(view("o-alice", "paid"), "alice"), 1);
        // an order id whose owner changed under it (a collision): its frame is no longer bob's
        if (ticks === 4) feed.put("o-bob", watchedOrder(view("o-bob", "paid"), "mallory"), 2);
        if (ticks === 8) bob.out.open = false;
        return ownFrame(feed.get("o-bob"), "bob") ?? null;
      },
      tickMs: 1,
      pingMs: 1_000_000,
      writeTimeoutMs: 50,
    });
    expect(bob.written).toHaveLength(1);
    expect(bob.written.join("")).toContain('"orderId":"o-bob"');
    expect(bob.written.join("")).not.toContain("o-alice");
    expect(bob.written.join("")).not.toContain('"paid"');
  });
});

import { describe, expect, it } from "vitest";
import { createLeases } from "../../src/realtime/leases";
import { type EventSink, firstEventId, pumpEvents } from "../../src/realtime/pump";
import { createSharedSnapshot } from "../../src/realtime/shared-snapshot";

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
  const base = {
    event: "sale",
    firstId: 7,
    data: (v: number) => String(v),
    key: (v: number) => String(v),
    tickMs: 1,
    pingMs: 1_000_000,
    writeTimeoutMs: 50,
  };

  it("writes the first value, then only changes, with increasing ids, and ends after a final value", async () => {
    const written: string[] = [];
    const values = [1, 1, 2, 2, 3];
    const { s } = sink(async (t) => written.push(t));
    const end = await pumpEvents(s, {
      ...base,
      first: 1,
      read: async () => values.shift() ?? 3,
      final: (v) => v === 3,
    });
    expect(end).toBe("final");
    expect(written).toEqual([
      "event: sale\nid: 7\ndata: 1\n\n",
      "event: sale\nid: 8\ndata: 2\n\n",
      "event: sale\nid: 9\ndata: 3\n\n",
    ]);
  });

  it("drops a reader whose write blocks, without waiting for it", async () => {
    let calls = 0;
    const { s, out } = sink(() => (++calls === 1 ? Promise.resolve() : new Promise(() => {})));
    let v = 0;
    const end = await pumpEvents(s, { ...base, first: 0, read: async () => ++v });
    expect([end, out.aborted, calls]).toEqual(["slow", true, 2]);
  });

  it("numbers the first event above the client's Last-Event-ID and above the clock", () => {
    expect(firstEventId("5000", 1000)).toBe(5001);
    expect(firstEventId(undefined, 1000)).toBe(1000);
    expect(firstEventId("junk", 1000)).toBe(1000);
    expect(firstEventId("1e300", 1000)).toBe(1000);
  });
});

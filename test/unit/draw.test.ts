import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { drawOrder, entriesHash, sha256Hex, sortedEntries } from "../../src/room/draw";

const sha = (text: string) => createHash("sha256").update(text).digest("hex");

describe("the draw: a pure function of the seed and the entries", () => {
  it("is the entries sorted by SHA-256(seed:entry), whatever order they come in", async () => {
    const entries = ["tb", "ta", "tc", "td"];
    const seed = sha("a seed");
    const order = await drawOrder(seed, entries);
    expect(await drawOrder(seed, [...entries].reverse())).toEqual(order);
    const expected = [...entries].sort((a, b) => (sha(`${seed}:${a}`) < sha(`${seed}:${b}`) ? -1 : 1));
    expect(order).toEqual(expected);
    expect(await sha256Hex("x")).toBe(sha("x"));
    expect(await entriesHash(sortedEntries(entries))).toBe(sha("ta\ntb\ntc\ntd"));
  });

  it("finds no bias: over 4,000 seeds each entry takes each place about equally (chi-square, p > 0.001)", async () => {
    const entries = ["t0", "t1", "t2", "t3", "t4"];
    const n = entries.length;
    const draws = 4000;
    const counts = entries.map(() => new Array<number>(n).fill(0));
    for (let i = 0; i < draws; i++) {
      const order = await drawOrder(sha(`seed ${i}`), entries);
      order.forEach((e, place) => {
        const row = counts[entries.indexOf(e)] as number[];
        row[place] = (row[place] ?? 0) + 1;
      });
    }
    const expected = draws / n;
    const chi2 = counts.flat().reduce((s, c) => s + (c - expected) ** 2 / expected, 0);
    // (5 − 1) × (5 − 1) = 16 degrees of freedom: 39.25 is the 0.001 critical value
    expect(chi2).toBeLessThan(39.25);
    // and a biased ranking (always the input order) is caught by the same test
    const biased = entries.map((_, e) => entries.map((_, place) => (e === place ? draws : 0)));
    expect(biased.flat().reduce<number>((s, c) => s + (c - expected) ** 2 / expected, 0)).toBeGreaterThan(
      39.25,
    );
  });
});

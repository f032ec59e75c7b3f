/**
 * IP address text, read strictly: an IPv4 address as four decimal octets, an IPv6 address as RFC 4291
 * writes it (any case, `::` once, a dotted IPv4 address as its last 32 bits). Anything else is null:
 * callers decide what text that is not an address means.
 *
 * @example
 * parseIpv6("2001:DB8::10.0.0.1"); // [0x2001, 0xdb8, 0, 0, 0, 0, 0x0a00, 0x0001]
 * formatIpv6([0x2001, 0xdb8, 0, 0, 0, 0, 0, 1]); // "2001:db8::1"
 */

/** An IPv4 address in dotted-quad form (no leading zeros), as a number below 2^32; else null. */
export function parseIpv4(text: string): number | null {
  const parts = text.split(".");
  if (parts.length !== 4) return null;
  let value = 0;
  for (const part of parts) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(part) || Number(part) > 255) return null;
    value = value * 256 + Number(part);
  }
  return value;
}

/** The dotted-quad text of an IPv4 address given as a number below 2^32. */
export function formatIpv4(value: number): string {
  return [value >>> 24, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff].join(".");
}

/** The groups of one side of `::`, a dotted IPv4 address allowed as the last piece when `last`. */
function groupsOf(side: string, last: boolean): number[] | null {
  if (side === "") return [];
  const pieces = side.split(":");
  const groups: number[] = [];
  for (const [i, piece] of pieces.entries()) {
    if (last && i === pieces.length - 1 && piece.includes(".")) {
      const v4 = parseIpv4(piece);
      if (v4 === null) return null;
      groups.push(v4 >>> 16, v4 & 0xffff);
    } else if (/^[0-9a-fA-F]{1,4}$/.test(piece)) {
      groups.push(Number.parseInt(piece, 16));
    } else {
      return null;
    }
  }
  return groups;
}

/** An IPv6 address (no brackets, no zone id) as its eight 16-bit groups; else null. */
export function parseIpv6(text: string): number[] | null {
  const sides = text.split("::");
  if (sides.length > 2) return null;
  const [head, tail] = sides as [string, string | undefined];
  const first = groupsOf(head, tail === undefined);
  const second = tail === undefined ? [] : groupsOf(tail, true);
  if (!first || !second) return null;
  if (tail === undefined) return first.length === 8 ? first : null;
  const missing = 8 - first.length - second.length;
  return missing >= 1 ? [...first, ...new Array<number>(missing).fill(0), ...second] : null;
}

/** RFC 5952's text of eight 16-bit groups: lower case, no leading zeros, the longest run of zeros as `::`. */
export function formatIpv6(groups: readonly number[]): string {
  let best = { at: -1, length: 1 };
  for (let i = 0; i < groups.length; ) {
    let j = i;
    while (j < groups.length && groups[j] === 0) j++;
    if (j - i > best.length) best = { at: i, length: j - i };
    i = j === i ? i + 1 : j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best.at < 0) return hex.join(":");
  return `${hex.slice(0, best.at).join(":")}::${hex.slice(best.at + best.length).join(":")}`;
}

/** The first `bits` bits of an IPv6 address, the rest zero. */
export function maskIpv6(groups: readonly number[], bits: number): number[] {
  return groups.map((g, i) => {
    const kept = Math.max(0, Math.min(16, bits - i * 16));
    return kept === 0 ? 0 : g & ((0xffff << (16 - kept)) & 0xffff);
  });
}

/** The IPv4 address an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) stands for; else null. */
export function mappedIpv4(groups: readonly number[]): number | null {
  const mapped = groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff;
  return mapped ? (groups[6] as number) * 0x10000 + (groups[7] as number) : null;
}

import { formatIpv4, formatIpv6, mappedIpv4, maskIpv6, parseIpv4, parseIpv6 } from "../ip-address";

/** `[addr]`, `[addr]:port`, `addr%zone`: the address inside. */
const BRACKETED = /^\[([^\]]*)\](?::\d{1,5})?$/;

/**
 * Who a client address counts as, in every per-address limit and stream budget (the buy's limit inside
 * its script, the shopper routes' limits, the sale streams' share): an IPv4 address as itself, an IPv6
 * address as its network of `ipv6PrefixBits` (IPV6_PREFIX_BITS, 64 by default: one subscriber's
 * allocation, where one client can pick any of 2^64 addresses), written `2001:db8:1:2::/64`, and an
 * IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) as its IPv4 address. Spellings of one address are one
 * key (case, `::`, leading zeros, brackets, a zone id); text that is no address counts as itself.
 *
 * @example
 * clientKey("2001:DB8:1:2:0:0:0:7%eth0", 64); // "2001:db8:1:2::/64"
 * clientKey("::ffff:198.51.100.9", 64);       // "198.51.100.9"
 */
export function clientKey(address: string | undefined, ipv6PrefixBits: number): string | undefined {
  const text = address?.trim();
  if (!text) return undefined;
  const inner = BRACKETED.exec(text)?.[1] ?? text;
  const bare = inner.replace(/%.*$/, "");
  if (parseIpv4(bare) !== null) return bare;
  const groups = parseIpv6(bare);
  if (!groups) return text;
  const v4 = mappedIpv4(groups);
  if (v4 !== null) return formatIpv4(v4);
  if (ipv6PrefixBits >= 128) return formatIpv6(groups);
  return `${formatIpv6(maskIpv6(groups, ipv6PrefixBits))}/${ipv6PrefixBits}`;
}

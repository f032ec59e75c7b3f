import { mappedIpv4, parseIpv4, parseIpv6 } from "../ip-address";
import type { ResolveHost } from "../services";

/** IPv4 networks that are not the public internet: [first address, prefix length, what it is]. */
const IPV4_INWARD: [string, number, string][] = [
  ["0.0.0.0", 8, "an unspecified address"],
  ["10.0.0.0", 8, "a private address"],
  ["100.64.0.0", 10, "a shared (carrier-grade NAT) address"],
  ["127.0.0.0", 8, "a loopback address"],
  ["169.254.0.0", 16, "a link-local address"],
  ["172.16.0.0", 12, "a private address"],
  ["192.0.0.0", 24, "a reserved address"],
  ["192.0.2.0", 24, "a documentation address"],
  ["192.168.0.0", 16, "a private address"],
  ["198.18.0.0", 15, "a benchmarking address"],
  ["198.51.100.0", 24, "a documentation address"],
  ["203.0.113.0", 24, "a documentation address"],
  ["224.0.0.0", 4, "a multicast address"],
  ["240.0.0.0", 4, "a reserved address"],
];

const inNetwork = (value: number, first: number, bits: number) =>
  Math.floor(value / 2 ** (32 - bits)) === Math.floor(first / 2 ** (32 - bits));

function ipv4Refusal(value: number): string | null {
  for (const [first, bits, what] of IPV4_INWARD)
    if (inNetwork(value, parseIpv4(first) as number, bits)) return what;
  return null;
}

/** What keeps an IPv6 address (eight groups) off the public internet, or null. */
function ipv6Refusal(g: readonly number[]): string | null {
  const v4 = mappedIpv4(g);
  if (v4 !== null) {
    const why = ipv4Refusal(v4);
    return why && `the IPv4-mapped form of ${why}`;
  }
  const [a = 0, b = 0, c = 0] = g;
  if (g.slice(0, 6).every((x) => x === 0)) {
    if (g[6] === 0 && g[7] === 1) return "a loopback address";
    return g[6] === 0 && g[7] === 0 ? "an unspecified address" : "an IPv4-compatible address";
  }
  if (a === 0x64 && b === 0xff9b && c === 0 && g.slice(3, 6).every((x) => x === 0)) {
    const why = ipv4Refusal((g[6] as number) * 0x10000 + (g[7] as number));
    return why && `a NAT64 form of ${why}`;
  }
  if (a === 0x64 && b === 0xff9b) return "a local NAT64 address";
  if (a === 0x100 && b === 0 && c === 0 && g[3] === 0) return "a discard address";
  if (a === 0x2001 && (b === 0 || b === 0xdb8))
    return b === 0 ? "a Teredo address" : "a documentation address";
  if (a === 0x2002) {
    const why = ipv4Refusal(b * 0x10000 + c);
    return why && `a 6to4 form of ${why}`;
  }
  if ((a & 0xfe00) === 0xfc00) return "a unique local address";
  if ((a & 0xffc0) === 0xfe80) return "a link-local address";
  if ((a & 0xffc0) === 0xfec0) return "a site-local address";
  if ((a & 0xff00) === 0xff00) return "a multicast address";
  return null;
}

/** What keeps an address (IPv4 or IPv6 text, brackets and zone id allowed) off the public internet, or null. */
export function addressRefusal(address: string): string | null {
  const bare = address.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  const v4 = parseIpv4(bare);
  if (v4 !== null) return ipv4Refusal(v4);
  const v6 = parseIpv6(bare);
  return v6 ? ipv6Refusal(v6) : null;
}

/** The host a URL names, as WHATWG URL parsing writes it (`127.1`, `0x7f.1`, `2130706433` are `127.0.0.1`). */
function hostOf(url: string): string {
  return new URL(url).hostname.replace(/\.+$/, "");
}

const isLiteral = (host: string) => host.startsWith("[") || parseIpv4(host) !== null;

/**
 * Why a webhook URL may not be an endpoint, from its text alone, or null: a host that is an address
 * off the public internet (loopback, private, link-local including the cloud metadata address,
 * CGNAT, unspecified, unique-local and link-local IPv6, and the IPv4-mapped, NAT64 and 6to4 forms
 * of those), or a `localhost` name, in any spelling the URL parser accepts.
 *
 * @example
 * targetRefusal("http://0x7f.1/hook"); // "127.0.0.1 is a loopback address"
 */
export function targetRefusal(url: string): string | null {
  const host = hostOf(url);
  if (host === "localhost" || host.endsWith(".localhost")) return `${host} names this machine`;
  if (!isLiteral(host)) return null;
  const why = addressRefusal(host);
  return why && `${host} is ${why}`;
}

/** Whether private targets are allowed (WEBHOOK_ALLOW_PRIVATE_TARGETS), and how names resolve here. */
export type TargetGuard = { allowPrivate: boolean; resolveHost: ResolveHost | null };

/**
 * Why a delivery to `url` may not go out now, or null: {@link targetRefusal} again (an endpoint written
 * before the check, or while private targets were allowed), then, where the runtime can resolve names
 * (Deno, Bun), any address the name resolves to that is off the public internet. A name that does not
 * resolve is left to the POST, which fails on its own. On Workers fetch runs on Cloudflare's network,
 * where the shop's private addresses are not reachable, so names are not resolved there.
 */
export async function deliveryRefusal(url: string, guard: TargetGuard): Promise<string | null> {
  if (guard.allowPrivate) return null;
  const literal = targetRefusal(url);
  if (literal) return literal;
  const host = hostOf(url);
  if (!guard.resolveHost || isLiteral(host)) return null;
  const addresses = await guard.resolveHost(host).catch(() => []);
  for (const address of addresses) {
    const why = addressRefusal(address);
    if (why) return `${host} resolves to ${address}, ${why}`;
  }
  return null;
}

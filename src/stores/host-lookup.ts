import { lookup } from "node:dns/promises";

/** How long a name may take to resolve before the answer counts as none. */
const LOOKUP_TIMEOUT_MS = 5_000;

/**
 * The addresses a host name resolves to on this machine (the system resolver, as the runtime's own
 * fetch uses it): server runtimes only (Deno, Bun); a Workers build does not bundle it. None when the
 * name does not resolve in time.
 *
 * @example
 * await lookupHost("shop.example"); // ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"]
 */
export async function lookupHost(host: string): Promise<string[]> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<string[]>((resolve) => {
    timer = setTimeout(() => resolve([]), LOOKUP_TIMEOUT_MS);
  });
  try {
    const found = lookup(host, { all: true, verbatim: true }).then((all) => all.map((a) => a.address));
    return await Promise.race([found, late]);
  } finally {
    clearTimeout(timer);
  }
}

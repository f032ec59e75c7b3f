import type { MiddlewareHandler } from "hono";

/** One block of a `_headers` file: a path pattern and the headers its responses get. */
export type HeaderRule = { pattern: RegExp; headers: [name: string, value: string][] };

/**
 * Parses a Cloudflare `_headers` file (public/_headers): a path pattern on its own line (`*` matches
 * anything, `:name` one segment), then indented `Name: value` lines; `#` starts a comment.
 */
export function parseHeadersFile(text: string): HeaderRule[] {
  const rules: HeaderRule[] = [];
  for (const line of text.split(/\r?\n/)) {
    if (/^\s*(#|$)/.test(line)) continue;
    if (!/^\s/.test(line)) {
      const source = line
        .trim()
        .split(/(\*|:[A-Za-z]\w*)/)
        .map((part) =>
          part === "*" ? ".*" : part.startsWith(":") ? "[^/]+" : part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"),
        )
        .join("");
      rules.push({ pattern: new RegExp(`^${source}$`), headers: [] });
      continue;
    }
    const header = /^\s+([^:]+):\s*(.*)$/.exec(line);
    if (header) rules.at(-1)?.headers.push([(header[1] as string).trim(), (header[2] as string).trim()]);
  }
  return rules;
}

/** The headers `_headers` gives a response to `path`: every matching block, in the file's order. */
export function headersFor(rules: HeaderRule[], path: string): [string, string][] {
  return rules.filter((r) => r.pattern.test(path)).flatMap((r) => r.headers);
}

/** What the runtime's `serveStatic` (hono/deno, hono/bun) is given. */
export type ServeStaticOptions = {
  root: string;
  rewriteRequestPath: (path: string) => string;
  onFound: (path: string, c: Parameters<MiddlewareHandler>[0]) => void;
};

/** What Workers static assets answer with when `_headers` says nothing about caching. */
const DEFAULT_CACHE_CONTROL = "public, max-age=0, must-revalidate";

/**
 * Serves `public/` on a server runtime as Workers static assets do (wrangler.toml `[assets]`): the same
 * `_headers` rules, `/page` for `page.html` (and `/page.html` redirected there, `/` for `index.html`), the same default
 * Cache-Control,
 * files starting with `_` never served. A path with no file goes on to the app (its 404).
 *
 * @example
 * app.use(staticSite({ root: "public", rules: parseHeadersFile(text), serve: serveStatic }))
 */
export function staticSite(options: {
  root: string;
  rules: HeaderRule[];
  serve: (options: ServeStaticOptions) => MiddlewareHandler;
}): MiddlewareHandler {
  const serve = options.serve({
    root: options.root,
    rewriteRequestPath: (path) => (path.endsWith("/") || /\.[^/]*$/.test(path) ? path : `${path}.html`),
    onFound: (_path, c) => {
      c.header("Cache-Control", DEFAULT_CACHE_CONTROL);
      const headers = new Map<string, string>();
      for (const [name, value] of headersFor(options.rules, c.req.path)) {
        const key = name.toLowerCase();
        headers.set(key, headers.has(key) ? `${headers.get(key)}, ${value}` : value);
      }
      for (const [name, value] of headers) c.header(name, value);
    },
  });
  return async function staticSiteMiddleware(c, next) {
    const path = c.req.path;
    if (path.split("/").some((segment) => segment.startsWith("_"))) return next();
    if (path.endsWith(".html")) {
      let missing = false;
      await serve(c, async () => {
        missing = true;
      });
      if (missing) return next();
      c.header("Cache-Control", undefined);
      return c.redirect(`${path.replace(/(index)?\.html$/, "")}${new URL(c.req.url).search}`, 307);
    }
    return serve(c, next);
  };
}

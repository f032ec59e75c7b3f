/**
 * Serves a Hono app (any `fetch(Request) → Response`) from a node:http server on loopback, for the local
 * stand-ins (the project has no `@hono/node-server`):
 *
 * - the request's body is read first, bounded by `maxBodyBytes` (a bigger one is dropped), and handed
 *   over whole; the binding `gone` (`c.env.gone`) is a signal that aborts when the client goes away before
 *   the answer is written (not the Request's own `signal`: undici builds a Request that follows a signal
 *   at twice the cost, on every command the benchmark sends);
 * - the answer is written back with its status and headers: a plain body whole, with `content-length`;
 *   a streaming one (`text/event-stream`, or `transfer-encoding: chunked`) chunk by chunk as the app
 *   produces it, waiting for the socket to drain; when the client goes away the body is cancelled, so the
 *   app's stream cleanup (Hono's `stream.onAbort`) runs.
 *
 * @example
 * const app = new Hono<OnNode>().get("/", (c) => c.text(c.env.gone.aborted ? "" : "hi"));
 * const server = await serveOnNode(app, { port: 0 });
 * await fetch(server.url); // "hi"
 * await server.close();
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { closeServer, errorMessage, listen, readBody } from "./http-util";
import { LOOPBACK } from "./ports";

/** The bindings a served app gets: `gone` aborts when the client leaves before its answer is written. */
export type OnNode = { Bindings: { gone: AbortSignal } };

/** What can be served: a Hono app, or anything else with its `fetch`. */
export type FetchHandler = {
  fetch(request: Request, env: OnNode["Bindings"]): Response | Promise<Response>;
};

export type NodeServer = { url: string; port: number; close(): Promise<void> };

/** Starts the server; resolves once it listens on 127.0.0.1 (`port` 0 or absent: a free one). */
export async function serveOnNode(
  app: FetchHandler,
  options: { port?: number; maxBodyBytes?: number } = {},
): Promise<NodeServer> {
  const maxBodyBytes = options.maxBodyBytes ?? 16 * 1024 * 1024;
  const server = createServer((req, res) => void dispatch(app, req, res, maxBodyBytes));
  const port = await listen(server, options.port);
  return { url: `http://${LOOPBACK}:${port}`, port, close: () => closeServer(server) };
}

async function dispatch(app: FetchHandler, req: IncomingMessage, res: ServerResponse, maxBytes: number) {
  const gone = new AbortController();
  res.once("close", () => res.writableFinished || gone.abort());
  let response: Response;
  try {
    response = await app.fetch(await toRequest(req, maxBytes), { gone: gone.signal });
  } catch (error) {
    if (gone.signal.aborted) return;
    response = Response.json({ error: `local server failure: ${errorMessage(error)}` }, { status: 500 });
  }
  await writeResponse(response, res, gone.signal);
}

async function toRequest(req: IncomingMessage, maxBytes: number): Promise<Request> {
  const headers: [string, string][] = [];
  for (const [name, value] of Object.entries(req.headers))
    if (value !== undefined) headers.push([name, Array.isArray(value) ? value.join(", ") : value]);
  const method = req.method ?? "GET";
  const body = method === "GET" || method === "HEAD" ? null : new Uint8Array(await readBody(req, maxBytes));
  return new Request(`http://${req.headers.host ?? LOOPBACK}${req.url ?? "/"}`, {
    method,
    headers,
    body,
  });
}

async function writeResponse(response: Response, res: ServerResponse, gone: AbortSignal): Promise<void> {
  if (res.destroyed) {
    await response.body?.cancel().catch(() => undefined);
    return;
  }
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers["set-cookie"] = cookies;
  if (!response.body || !isStreaming(response.headers)) {
    const body = Buffer.from(await response.arrayBuffer());
    res.writeHead(response.status, { ...headers, "content-length": String(body.length) }).end(body);
    return;
  }
  res.writeHead(response.status, headers);
  res.flushHeaders();
  const reader = response.body.getReader();
  const stop = () => void reader.cancel().catch(() => undefined);
  gone.addEventListener("abort", stop, { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || res.destroyed) break;
      if (!res.write(value)) await drained(res);
    }
    res.end();
  } catch {
    res.destroy();
  } finally {
    gone.removeEventListener("abort", stop);
  }
}

function isStreaming(headers: Headers): boolean {
  return (
    (headers.get("content-type") ?? "").startsWith("text/event-stream") ||
    (headers.get("transfer-encoding") ?? "").includes("chunked")
  );
}

function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.once("drain", done);
    res.once("close", done);
  });
}

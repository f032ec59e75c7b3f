/**
 * Small HTTP helpers shared by the local stand-in servers (node:http, no framework): read a bounded
 * request body, answer JSON, read a bearer token, listen on loopback and close for good.
 *
 * @example
 * const server = createServer(async (req, res) => sendJson(res, 200, { body: await readBody(req) }));
 * const port = await listen(server, 0);
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { LOOPBACK, portOrFree } from "./ports";

/** Reads the whole request body; destroys the request when it exceeds `maxBytes`. */
export function readBody(req: IncomingMessage, maxBytes = 16 * 1024 * 1024): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) req.destroy(new Error("request body too large"));
      else chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

/** Answers `body` as JSON with `status` and any extra headers. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) return;
  const text = body === undefined ? "" : JSON.stringify(body);
  res.writeHead(status, {
    ...(text ? { "content-type": "application/json" } : {}),
    "content-length": Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** The token of an `Authorization: Bearer …` header, if any. */
export function bearer(req: IncomingMessage): string | undefined {
  const auth = req.headers.authorization ?? "";
  return auth.startsWith("Bearer ") ? auth.slice(7) : undefined;
}

/** A header's value as one string ("" when absent). */
export function header(req: IncomingMessage, name: string): string {
  const value = req.headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(", ") : (value ?? "");
}

/** Listens on 127.0.0.1 at `port` (0 or absent: a free one) and resolves with the port. */
export async function listen(server: Server, port?: number): Promise<number> {
  const chosen = await portOrFree(port);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(chosen, LOOPBACK, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return chosen;
}

/** Stops accepting connections and drops the open ones (keep-alive clients included). */
export async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** The message of an error-like value, never its stack. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

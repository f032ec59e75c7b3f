/**
 * Small node:http helpers for the local servers (`hono-on-node.ts`) and the test receivers: read a
 * bounded request body, listen on loopback and close for good, and an error's message.
 *
 * @example
 * const server = createServer(async (req, res) => res.end(await readBody(req)));
 * const port = await listen(server, 0);
 */
import type { IncomingMessage, Server } from "node:http";
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

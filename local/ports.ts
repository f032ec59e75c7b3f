/**
 * Port helpers for the local stack: pick a free loopback port, and wait until something listens on one.
 *
 * `freePort()` asks the kernel for an unused port by binding port 0 and releasing it; another process
 * could take it in between, which is acceptable for tests and the dev stack on one machine.
 *
 * @example
 * const port = await freePort();
 * await waitFor(() => isListening(port), { timeoutMs: 5_000, what: `port ${port}` });
 */
import { createConnection, createServer } from "node:net";

/** The loopback address every local server binds to: nothing here is reachable from outside. */
export const LOOPBACK = "127.0.0.1";

/** Returns a TCP port that was free on 127.0.0.1 a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once("error", reject);
    server.listen(0, LOOPBACK, () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error("could not pick a free port"))));
    });
  });
}

/** `port` itself when given and non-zero, otherwise a free port. */
export async function portOrFree(port: number | undefined): Promise<number> {
  return port !== undefined && port !== 0 ? port : freePort();
}

/** True when a TCP connection to 127.0.0.1:port is accepted within `timeoutMs`. */
export function isListening(port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: LOOPBACK, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

/** Polls `check` every `intervalMs` until it resolves true; rejects after `timeoutMs`. */
export async function waitFor(
  check: () => Promise<boolean>,
  {
    timeoutMs = 10_000,
    intervalMs = 25,
    what = "condition",
  }: { timeoutMs?: number; intervalMs?: number; what?: string | (() => string) } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  throw new Error(
    `timed out after ${timeoutMs} ms waiting for ${typeof what === "function" ? what() : what}`,
  );
}

/**
 * A TLS-terminating reverse proxy, as a server runtime is deployed behind (nginx, a load balancer): it
 * serves HTTPS on loopback with a throwaway self-signed certificate and forwards every request to the
 * engine over plain HTTP, keeping `Host` and adding `X-Forwarded-For` (the client's address appended),
 * `X-Forwarded-Proto: https` and `X-Forwarded-Host`. Answers stream back as they come (event streams
 * too). Clients of the proxy trust its certificate with {@link trustingFetch} (the QStash stand-in's
 * `fetch` option, the tests' and chaos shoppers' requests).
 *
 * @example
 * const cert = throwawayCertificate();
 * const proxy = await startTlsProxy({ cert });        // https://127.0.0.1:<port>
 * const engine = await startServer({ runtime: "bun", vars, publicUrl: proxy.url });
 * proxy.setTarget(engine.url);
 * await trustingFetch(cert.cert)(`${proxy.url}/api/health`);
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import {
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
import { createServer } from "node:https";
import type { Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent, fetch as undiciFetch } from "undici";
import { LOOPBACK, portOrFree } from "./ports";

/** A PEM certificate and its private key. */
export type Certificate = { cert: string; key: string };

/**
 * A self-signed certificate for 127.0.0.1 and localhost, valid one day, made by `openssl` (Debian's,
 * present wherever Node is); nothing is kept on disk.
 */
export function throwawayCertificate(): Certificate {
  const dir = mkdtempSync(join(tmpdir(), "flashsale-cert-"));
  try {
    const [key, cert] = [join(dir, "key.pem"), join(dir, "cert.pem")];
    execFileSync(
      "openssl",
      [
        ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"],
        ["-days", "1", "-subj", "/CN=localhost", "-keyout", key, "-out", cert],
        ["-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
      ].flat(),
      { stdio: "ignore" },
    );
    return { cert: readFileSync(cert, "utf8"), key: readFileSync(key, "utf8") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A `fetch` that trusts `ca` (a PEM certificate) besides the usual roots. */
export function trustingFetch(ca: string): typeof fetch {
  const dispatcher = new Agent({ connect: { ca } });
  return ((input: string | URL | Request, init?: RequestInit) =>
    undiciFetch(input as string, { ...(init as object), dispatcher })) as unknown as typeof fetch;
}

export type TlsProxy = {
  /** `https://127.0.0.1:<port>` */
  url: string;
  port: number;
  /** Where requests go (the engine's plain-HTTP origin); until set, the proxy answers 502. */
  setTarget(url: string): void;
  /** Requests forwarded so far. */
  forwarded(): number;
  close(): Promise<void>;
};

function forwardedFor(req: IncomingMessage): string {
  const prior = req.headers["x-forwarded-for"];
  const client = req.socket.remoteAddress ?? "";
  return prior ? `${prior}, ${client}` : client;
}

/** Starts the proxy on loopback (`port` 0 or absent: a free one). */
export async function startTlsProxy(options: { cert: Certificate; port?: number }): Promise<TlsProxy> {
  let target: URL | null = null;
  let forwarded = 0;
  const upstream = new HttpAgent({ keepAlive: true, maxSockets: 256 });
  const sockets = new Set<Socket>();
  const server = createServer(
    { cert: options.cert.cert, key: options.cert.key },
    (req: IncomingMessage, res: ServerResponse) => {
      if (!target) {
        res.writeHead(502).end();
        return;
      }
      forwarded++;
      const out = httpRequest(
        new URL(req.url ?? "/", target),
        {
          method: req.method,
          agent: upstream,
          headers: {
            ...req.headers,
            "x-forwarded-for": forwardedFor(req),
            "x-forwarded-proto": "https",
            "x-forwarded-host": req.headers.host ?? "",
          },
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      out.on("error", () => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
      res.on("close", () => res.writableFinished || out.destroy());
      req.pipe(out);
    },
  );
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  const port = await portOrFree(options.port);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, LOOPBACK, () => resolve());
  });
  return {
    url: `https://${LOOPBACK}:${port}`,
    port,
    setTarget(url) {
      target = new URL(url);
    },
    forwarded: () => forwarded,
    async close() {
      for (const socket of sockets) socket.destroy();
      upstream.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

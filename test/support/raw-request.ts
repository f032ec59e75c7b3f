import { connect } from "node:net";

export type StreamedAnswer = {
  /** The HTTP status the server answered with, or 0 when it gave none before `giveUpMs`. */
  status: number;
  /** The response body as far as it arrived (the error body of an early answer). */
  text: string;
  /** Body bytes the client had written when the answer arrived (or when it gave up). */
  sentBytes: number;
};

/**
 * Posts a body the client controls byte by byte over a raw socket: `body` chunks are written with
 * back-pressure until the server answers, the generator ends, or `giveUpMs` passes (status 0). With
 * `pause`, writing stops once `afterBytes` are sent until the server answers or `forMs` pass: a server
 * that answers early then has read everything sent, so closing the socket cannot reset the connection
 * and drop its answer before the client reads it. With `chunked`, the body goes as Transfer-Encoding: chunked (no Content-Length); otherwise the given headers
 * (e.g. a Content-Length that lies) are sent as they are. The socket is torn down as soon as the status
 * line and the body that came with it are read, so an endless body never has to end.
 *
 * @example
 * const answer = await streamRequest(url, { headers: { "Content-Length": "52428800" }, body: stall() });
 */
export function streamRequest(
  url: string,
  opts: {
    headers: Record<string, string>;
    body: AsyncIterable<Uint8Array>;
    chunked?: boolean;
    pause?: { afterBytes: number; forMs: number };
    giveUpMs?: number;
  },
): Promise<StreamedAnswer> {
  const target = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(target.port), target.hostname);
    let sentBytes = 0;
    let received = "";
    let settled = false;
    let paused = false;
    let answer = () => {};
    const answered = new Promise<void>((r) => {
      answer = r;
    });
    const finish = (status: number) => {
      if (settled) return;
      settled = true;
      answer();
      clearTimeout(timer);
      socket.destroy();
      resolve({ status, text: received.split("\r\n\r\n").slice(1).join("\r\n\r\n"), sentBytes });
    };
    const timer = setTimeout(() => finish(0), opts.giveUpMs ?? 20_000);
    socket.on("data", (data) => {
      received += data.toString("latin1");
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(received)?.[1] ?? 0);
      const [head, body = ""] = received.split("\r\n\r\n");
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head ?? "")?.[1] ?? Number.NaN);
      if (status && (body.length >= length || /\r\ntransfer-encoding: *chunked/i.test(head ?? "")))
        finish(status);
    });
    socket.on("error", () => finish(Number(/^HTTP\/1\.1 (\d{3})/.exec(received)?.[1] ?? 0)));
    socket.on("close", () => finish(Number(/^HTTP\/1\.1 (\d{3})/.exec(received)?.[1] ?? 0)));
    const write = (data: Uint8Array | string) =>
      new Promise<void>((done) => {
        if (settled || !socket.write(data)) socket.once("drain", done);
        else done();
        if (settled) done();
      });
    socket.on("connect", async () => {
      const headers = {
        Host: target.host,
        ...(opts.chunked ? { "Transfer-Encoding": "chunked" } : {}),
        ...opts.headers,
      };
      const head = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`);
      await write(`POST ${target.pathname}${target.search} HTTP/1.1\r\n${head.join("")}\r\n`);
      for await (const chunk of opts.body) {
        if (settled) return;
        await write(opts.chunked ? `${chunk.byteLength.toString(16)}\r\n` : "");
        await write(chunk);
        if (opts.chunked) await write("\r\n");
        sentBytes += chunk.byteLength;
        if (opts.pause && !paused && sentBytes >= opts.pause.afterBytes) {
          paused = true;
          await Promise.race([answered, new Promise((r) => setTimeout(r, opts.pause?.forMs))]);
        }
      }
      if (opts.chunked && !settled) await write("0\r\n\r\n");
    });
  });
}

/** `count` chunks of `size` bytes of JSON-ish filler (an endless stream when `count` is Infinity). */
export async function* filler(size: number, count: number): AsyncGenerator<Uint8Array> {
  const chunk = new TextEncoder().encode('{"orders":['.padEnd(size, " ").slice(0, size));
  for (let i = 0; i < count; i++) yield chunk;
}

/** Sends `first` and then never anything more (a body that stalls after its first bytes). */
export async function* stall(first: Uint8Array): AsyncGenerator<Uint8Array> {
  yield first;
  await new Promise(() => {});
}

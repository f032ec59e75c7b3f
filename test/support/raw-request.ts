import { connect } from "node:net";
import { checkExchange } from "./openapi-check";

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
 * line and the body that came with it are read, so an endless body never has to end. An answer is checked
 * against the OpenAPI document the server publishes (see openapi-check.ts): the promise rejects when it
 * breaks it.
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
  return new Promise((resolve, reject) => {
    const socket = connect(Number(target.port), target.hostname);
    let sentBytes = 0;
    let received = Buffer.alloc(0);
    let settled = false;
    let paused = false;
    let answer = () => {};
    const answered = new Promise<void>((r) => {
      answer = r;
    });
    const finish = () => {
      if (settled) return;
      settled = true;
      answer();
      clearTimeout(timer);
      socket.destroy();
      const reply = readAnswer(received);
      const result = { status: reply?.status ?? 0, text: reply?.body ?? "", sentBytes };
      if (!reply) return resolve(result);
      // the answer, however hostile the request, must be one the document allows (its body once complete)
      checkExchange({
        method: "POST",
        url,
        status: reply.status,
        headers: reply.headers,
        ...(reply.complete ? { text: reply.body } : {}),
      }).then(() => resolve(result), reject);
    };
    const timer = setTimeout(finish, opts.giveUpMs ?? 20_000);
    socket.on("data", (data) => {
      received = Buffer.concat([received, data]);
      if (readAnswer(received)?.complete) finish();
    });
    socket.on("error", finish);
    socket.on("close", finish);
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

/**
 * The HTTP answer in `raw` as far as it arrived: status, headers and body (de-chunked, UTF-8), and
 * whether it is complete (its Content-Length read, or its last chunk); null before the status line.
 */
function readAnswer(
  raw: Buffer,
): { status: number; headers: Headers; body: string; complete: boolean } | null {
  const end = raw.indexOf("\r\n\r\n");
  const head = raw.subarray(0, end < 0 ? raw.length : end).toString("latin1");
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
  if (!status || end < 0)
    return status ? { status, headers: new Headers(), body: "", complete: false } : null;
  const headers = new Headers();
  for (const line of head.split("\r\n").slice(1)) {
    const colon = line.indexOf(":");
    if (colon > 0) headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
  }
  let body = raw.subarray(end + 4);
  let complete = body.length >= Number(headers.get("content-length") ?? Number.POSITIVE_INFINITY);
  if (/chunked/i.test(headers.get("transfer-encoding") ?? "")) {
    const parts: Buffer[] = [];
    let at = 0;
    for (;;) {
      const lineEnd = body.indexOf("\r\n", at);
      const size = lineEnd < 0 ? Number.NaN : Number.parseInt(body.subarray(at, lineEnd).toString(), 16);
      if (!Number.isFinite(size) || body.length < lineEnd + 2 + size) break;
      if (size === 0) {
        complete = true;
        break;
      }
      parts.push(body.subarray(lineEnd + 2, lineEnd + 2 + size));
      at = lineEnd + 4 + size;
    }
    body = Buffer.concat(parts);
  }
  return { status, headers, body: body.toString("utf8"), complete };
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

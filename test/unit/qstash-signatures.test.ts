import { createHash, createHmac } from "node:crypto";
import { Receiver } from "@upstash/qstash";
import fc from "fast-check";
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { verifyQStashSignature } from "../../src/middleware/qstash-token";

const keys = { current: "sig_currentcurrentcurrent01", next: "sig_nextnextnextnextnext0001" };
const URL_SIGNED = "https://shop.example/api/jobs/order-write";
const now = () => Math.floor(Date.now() / 1000);
const enc = new TextEncoder();
const b64 = (text: string | Uint8Array) => Buffer.from(text).toString("base64url");
const bodyHash = (body: string) => createHash("sha256").update(body).digest("base64url");

/** The two verdicts on one delivery: @upstash/qstash's Receiver and ours. */
async function verdicts(signature: string, body: string, url = URL_SIGNED) {
  const receiver = new Receiver({ currentSigningKey: keys.current, nextSigningKey: keys.next });
  const theirs = await receiver.verify({ signature, body, url }).catch(() => false);
  return { theirs, ours: verifyQStashSignature(signature, { body, url }, keys, now()) };
}

/** A token as QStash signs one (local/qstash-delivery.ts does the same), with `claims` changed. */
function sign(
  claims: Record<string, unknown>,
  key: string,
  header: Record<string, unknown> = { alg: "HS256", typ: "JWT" },
) {
  return new SignJWT(claims).setProtectedHeader(header as { alg: string }).sign(enc.encode(key));
}

const body = fc.oneof(fc.string({ unit: "binary", maxLength: 200 }), fc.json());
const t = now();
// both verdicts read the clock: hold it mid-second at `t`, so that no second ticks between them
beforeAll(() => {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(t * 1000 + 500);
});
afterAll(() => {
  vi.useRealTimers();
});

/** A token whose payload segment is `payload` as given (any bytes), rightly signed under `key`. */
function signedRaw(payload: Uint8Array | string, key = keys.current) {
  const input = `${b64('{"alg":"HS256","typ":"JWT"}')}.${b64(payload)}`;
  return `${input}.${createHmac("sha256", key).update(input).digest("base64url")}`;
}
/** A claim valid most of the time, else one of the `others`. */
const mostly = <T>(valid: T, ...others: T[]) =>
  fc.oneof({ weight: 6, arbitrary: fc.constant(valid) }, fc.constantFrom(...others));
/** Claims around the valid ones: each field kept, changed, or dropped. */
const claims = (text: string) =>
  fc.record({
    iss: mostly<unknown>("Upstash", "upstash", undefined, 1),
    sub: mostly<unknown>(
      URL_SIGNED,
      `${URL_SIGNED}?x=1`,
      "http://shop.example/api/jobs/order-write",
      undefined,
    ),
    exp: mostly<unknown>(t + 300, t + 1, t, t - 1, undefined, "later"),
    nbf: mostly<unknown>(t - 1, t, t + 5, undefined, "now"),
    iat: mostly<unknown>(t, t + 60, undefined, "then"),
    jti: fc.constant("jwt_1"),
    body: mostly<unknown>(bodyHash(text), `${bodyHash(text)}=`, bodyHash(`${text}.`), undefined, 3),
  });

describe("a QStash delivery's signature", () => {
  it("is judged as @upstash/qstash's Receiver judges it, whatever its claims and key", async () => {
    let taken = 0;
    await fc.assert(
      fc.asyncProperty(
        body.chain((text) => fc.tuple(fc.constant(text), claims(text))),
        fc.constantFrom(keys.current, keys.next, "sig_someoneelse0000000000000"),
        async ([text, claimed], key) => {
          const defined = Object.fromEntries(Object.entries(claimed).filter(([, v]) => v !== undefined));
          const signature = await sign(defined, key);
          const { theirs, ours } = await verdicts(signature, text);
          expect(ours).toBe(theirs);
          taken += theirs ? 1 : 0;
        },
      ),
      { numRuns: 600 },
    );
    // both verdicts were reached often
    expect(taken).toBeGreaterThan(60);
    expect(taken).toBeLessThan(540);
  });

  it("takes a valid delivery, under the next key too, and nothing changed in it", async () => {
    const text = '{"orders":[{"orderId":"s-1"}]}';
    const valid = {
      iss: "Upstash",
      sub: URL_SIGNED,
      exp: t + 300,
      nbf: t,
      iat: t,
      jti: "j",
      body: bodyHash(text),
    };
    for (const key of [keys.current, keys.next])
      expect(await verdicts(await sign(valid, key), text)).toEqual({ theirs: true, ours: true });
    const token = await sign(valid, keys.current);
    const [h, p, s] = token.split(".") as [string, string, string];
    const flipped = `${s.slice(0, -2)}${s.at(-2) === "A" ? "B" : "A"}${s.at(-1)}`;
    const others = {
      "another body": [token, `${text} `],
      "another URL": [token, text, `${URL_SIGNED}/`],
      "a changed signature": [`${h}.${p}.${flipped}`, text],
      "no signature": [`${h}.${p}.`, text],
      "four segments": [`${token}.x`, text],
      "alg none": [`${b64('{"alg":"none"}')}.${p}.`, text],
      "a payload that is an array, rightly signed": [signedRaw("[1]"), text],
      "a payload that is a string, rightly signed": [signedRaw('"Upstash"'), text],
      "a payload that is not JSON, rightly signed": [signedRaw("{iss:Upstash}"), text],
    } as const;
    for (const [what, [signature, delivered, url]] of Object.entries(others))
      expect({ what, ...(await verdicts(signature, delivered, url)) }).toEqual({
        what,
        theirs: false,
        ours: false,
      });
  });

  it("refuses what only jose would take: HS512 under the key, crit and b64 headers, padding, invalid UTF-8, an empty key", async () => {
    const text = "{}";
    const valid = { iss: "Upstash", sub: URL_SIGNED, exp: t + 300, body: bodyHash(text) };
    const json = JSON.stringify(valid);
    // a rightly signed payload holding invalid UTF-8 inside a string (jose 5 reads it as U+FFFD)
    const bytes = Buffer.concat([
      Buffer.from(json.slice(0, -1)),
      Buffer.from(',"x":"'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"}'),
    ]);
    expect(await verdicts(signedRaw(json), text)).toEqual({ theirs: true, ours: true });
    expect((await verdicts(signedRaw(bytes), text)).ours).toBe(false);
    expect((await verdicts(`${signedRaw(json)}=`, text)).ours).toBe(false);
    expect((await verdicts(await sign(valid, keys.current, { alg: "HS512" }), text)).ours).toBe(false);
    expect(
      (await verdicts(await sign(valid, keys.current, { alg: "HS256", b64: true, crit: ["b64"] }), text))
        .ours,
    ).toBe(false);
    const signature = await sign(valid, "x");
    expect(
      verifyQStashSignature(signature, { body: text, url: URL_SIGNED }, { current: "", next: "" }, now()),
    ).toBe(false);
  });
});

import fc from "fast-check";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { newSecret, signatures } from "../../src/webhooks/secrets";

describe("webhook signatures", () => {
  it("are what the standardwebhooks library signs and verifies, for every secret of a rotation", () => {
    const secrets = Array.from({ length: 3 }, newSecret);
    fc.assert(
      fc.property(
        fc.constantFrom(...secrets),
        fc.constantFrom(...secrets),
        fc.string({ unit: "binary", maxLength: 400 }),
        fc.integer({ min: 1_600_000_000_000, max: 2_000_000_000_000 }),
        (current, previous, text, ms) => {
          const body = JSON.stringify({ type: "order.reserved", data: { text } }); // verify() parses JSON
          const at = new Date(ms);
          const header = signatures([current, previous], "msg_ord_1_2", at, body);
          const [first, second] = header.split(" ");
          expect(first).toBe(new Webhook(current).sign("msg_ord_1_2", at, body));
          expect(second).toBe(new Webhook(previous).sign("msg_ord_1_2", at, body));
          const headers = {
            "webhook-id": "msg_ord_1_2",
            "webhook-timestamp": String(Math.floor(ms / 1000)),
            "webhook-signature": header,
          };
          // the library checks the timestamp against its clock: verify as of the message's time
          const verifier = new Webhook(previous);
          const now = Date.now;
          Date.now = () => ms;
          try {
            expect(() => verifier.verify(body, headers)).not.toThrow();
          } finally {
            Date.now = now;
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it("a signature under another secret, or of another body, does not verify", () => {
    const [mine, other] = [newSecret(), newSecret()];
    const at = new Date();
    const headers = (signature: string) => ({
      "webhook-id": "msg_1",
      "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
      "webhook-signature": signature,
    });
    expect(() => new Webhook(mine).verify("{}", headers(signatures([other], "msg_1", at, "{}")))).toThrow();
    expect(() => new Webhook(mine).verify("{}", headers(signatures([mine], "msg_1", at, "{ }")))).toThrow();
    expect(() =>
      new Webhook(mine).verify("{}", headers(signatures([mine], "msg_1", at, "{}"))),
    ).not.toThrow();
  });

  it("a secret that is not 24 bytes or more of base64 signs nothing", () => {
    const at = new Date();
    for (const bad of ["whsec_", "whsec_!!!!", "whsec_c2hvcnQ=", `whsec_${"A".repeat(20)}`, "whsec_a b"])
      expect(() => signatures([bad], "msg_1", at, "{}")).toThrow();
    expect(() => signatures([newSecret()], "msg_1", at, "{}")).not.toThrow();
  });
});

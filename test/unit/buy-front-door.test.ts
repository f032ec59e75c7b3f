import { Hono } from "hono";
import { secureHeaders } from "hono/secure-headers";
import { describe, expect, it } from "vitest";
import { SECURITY_HEADERS } from "../../src/runtime/buy-front-door";

describe("the buy's front door", () => {
  it("answers with the security headers hono/secure-headers sets (as the app uses it)", async () => {
    const probe = new Hono().use(secureHeaders()).get("/", (c) => c.body(null));
    const res = await probe.request("/");
    const set = [...res.headers].map(([name, value]) => [name.toLowerCase(), value]).sort();
    const ours = SECURITY_HEADERS.map(([name, value]) => [name.toLowerCase(), value]).sort();
    expect(ours).toEqual(set);
  });
});

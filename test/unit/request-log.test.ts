import { describe, expect, it } from "vitest";
import { requestIdOf } from "../../src/http/request-id";
import { requestLogLine, shouldLog } from "../../src/http/request-log";

describe("a request's log line", () => {
  it("is one JSON object with the id, the route's pattern, the status, the code and the time", () => {
    const line = requestLogLine({
      requestId: "r-1",
      method: "POST",
      route: "/api/buy/:productToken",
      status: 410,
      code: "SOLD_OUT",
      durationMs: 0.41234,
    });
    expect(line).not.toContain("\n");
    expect(JSON.parse(line)).toEqual({
      level: "info",
      msg: "request",
      requestId: "r-1",
      method: "POST",
      route: "/api/buy/:productToken",
      status: 410,
      code: "SOLD_OUT",
      durationMs: 0.41,
    });
  });

  it("is an error line for an answer of 500 or more", () => {
    const line = JSON.parse(
      requestLogLine({ requestId: "r", method: "GET", route: "/api/x", status: 503, durationMs: 1 }),
    );
    expect(line.level).toBe("error");
  });

  it("is always written for a failure, never at rate 0 otherwise, always at rate 1", () => {
    for (let i = 0; i < 200; i++) {
      expect(shouldLog(500, 0)).toBe(true);
      expect(shouldLog(503, 0)).toBe(true);
      expect(shouldLog(410, 0)).toBe(false);
      expect(shouldLog(202, 1)).toBe(true);
    }
    const sampled = Array.from({ length: 20_000 }, () => shouldLog(200, 0.1)).filter(Boolean).length;
    expect(sampled).toBeGreaterThan(1_400);
    expect(sampled).toBeLessThan(2_600);
  });
});

describe("a request's id", () => {
  it("keeps a well-formed id the caller sent and makes a new one otherwise", () => {
    expect(requestIdOf("abc-123_X.y:z+/=")).toBe("abc-123_X.y:z+/=");
    for (const sent of [null, undefined, "", "a b", "x".repeat(129), 'q"', "é"]) {
      const made = requestIdOf(sent);
      expect(made).toMatch(/^[0-9a-f-]{36}$/);
      expect(made).not.toBe(requestIdOf(sent));
    }
  });
});

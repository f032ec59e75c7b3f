import { describe, expect, it } from "vitest";
import { contractOf, type Exchange } from "../support/openapi-contract";
import type { OpenApiDocument } from "../support/openapi-document";

/** A tiny hand-written document: one strict object by $ref, a 429 whose Retry-After is required. */
const doc: OpenApiDocument = {
  openapi: "3.1.0",
  info: { title: "tiny", version: "1" },
  paths: {
    "/api/things/{id}": {
      get: {
        parameters: [{ name: "id", in: "path", required: true, schema: { type: "string" } }],
        responses: {
          200: {
            description: "a thing",
            content: { "application/json": { schema: { $ref: "#/components/schemas/Thing" } } },
          },
          429: {
            description: "slow down",
            headers: {
              "Retry-After": { required: true, schema: { type: "string", pattern: "^[1-9][0-9]*$" } },
            },
            content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
          },
        },
      },
    },
    "/api/things/{id}/events": {
      get: { responses: { 200: { description: "a stream", content: { "text/event-stream": {} } } } },
    },
  },
  components: {
    schemas: {
      Thing: {
        type: "object",
        properties: {
          id: { type: "string", example: "t1" },
          count: { type: "integer", minimum: 0 },
          at: { type: "string", format: "date-time" },
        },
        required: ["id", "count"],
        additionalProperties: false,
      },
      Error: {
        type: "object",
        properties: {
          error: { type: "object", properties: { code: { type: "string" } }, required: ["code"] },
        },
        required: ["error"],
      },
      Sale: { $ref: "#/components/schemas/Thing" },
    },
  },
};

const contract = contractOf(doc);
const json = { "Content-Type": "application/json; charset=UTF-8" };

function answer(
  path: string,
  status: number,
  body: unknown,
  headers: Record<string, string> = json,
): Exchange {
  return {
    method: "GET",
    url: `http://127.0.0.1:1${path}`,
    status,
    headers: new Headers(headers),
    text: typeof body === "string" ? body : JSON.stringify(body),
  };
}

const problems = (ex: Exchange) => contract.problems(ex).join("\n");

describe("the OpenAPI check of one answer", () => {
  it("passes a good answer (a $ref'd strict object, a format, a charset on the Content-Type)", () => {
    expect(
      problems(answer("/api/things/t1", 200, { id: "t1", count: 2, at: "2026-01-01T00:00:00.000Z" })),
    ).toBe("");
    const slow = answer(
      "/api/things/t1",
      429,
      { error: { code: "RATE_LIMITED" } },
      { ...json, "Retry-After": "2" },
    );
    expect(problems(slow)).toBe("");
  });

  it("fails an undocumented path or method, unless it is the contract's 404 NOT_FOUND", () => {
    expect(problems(answer("/api/nowhere", 200, { ok: true }))).toMatch(
      /GET \/api\/nowhere is not in the document/,
    );
    expect(problems({ ...answer("/api/things/t1", 200, { id: "t1", count: 1 }), method: "DELETE" })).toMatch(
      /DELETE \/api\/things\/t1 is not in the document/,
    );
    const notFound = { error: { code: "NOT_FOUND", message: "No such route.", requestId: "r-1" } };
    expect(problems(answer("/api/nowhere", 404, notFound))).toBe("");
    const { requestId: _, ...withoutId } = notFound.error;
    expect(problems(answer("/api/nowhere", 404, { error: withoutId }))).not.toBe("");
    expect(problems(answer("/api/nowhere", 404, { error: { ...notFound.error, extra: 1 } }))).not.toBe("");
  });

  it("fails a status the operation does not document", () => {
    expect(problems(answer("/api/things/t1", 404, { error: { code: "UNKNOWN" } }))).toMatch(
      /status 404 is not documented for get \/api\/things\/\{id\} \(documented: 200, 429\)/,
    );
  });

  it("fails a wrong body, naming what is wrong", () => {
    expect(problems(answer("/api/things/t1", 200, { id: "t1", count: -1 }))).toMatch(/\/count must be >= 0/);
    expect(problems(answer("/api/things/t1", 200, { id: "t1" }))).toMatch(
      /must have required property 'count'/,
    );
    expect(problems(answer("/api/things/t1", 200, { id: "t1", count: 1, at: "yesterday" }))).toMatch(
      /\/at must match format "date-time"/,
    );
    expect(problems(answer("/api/things/t1", 200, "{not json"))).toMatch(/not JSON/);
  });

  it("fails an extra field on a strict object", () => {
    expect(problems(answer("/api/things/t1", 200, { id: "t1", count: 1, secret: "x" }))).toMatch(
      /must NOT have additional properties.*"additionalProperty":"secret"/,
    );
  });

  it("fails a missing required header, and one that breaks its schema", () => {
    const body = { error: { code: "RATE_LIMITED" } };
    expect(problems(answer("/api/things/t1", 429, body))).toMatch(/required header Retry-After is missing/);
    expect(problems(answer("/api/things/t1", 429, body, { ...json, "Retry-After": "0.5" }))).toMatch(
      /header Retry-After: "0.5" does not match/,
    );
  });

  it("fails a Content-Type the response does not document", () => {
    expect(problems(answer("/api/things/t1", 200, "{}", { "Content-Type": "text/html" }))).toMatch(
      /Content-Type text\/html is not documented/,
    );
  });

  it("checks a stream by its headers, and each event's data by the schema its name stands for", () => {
    const stream = {
      ...answer("/api/things/t1/events", 200, ""),
      headers: new Headers({ "Content-Type": "text/event-stream" }),
    };
    delete stream.text;
    expect(problems(stream)).toBe("");
    expect(contract.eventProblems("sale", JSON.stringify({ id: "t1", count: 1 }))).toEqual([]);
    expect(contract.eventProblems("sale", JSON.stringify({ id: "t1", count: "1" })).join()).toMatch(
      /"sale" event does not match Sale/,
    );
    // no component for these names in this document: skipped
    expect(contract.eventProblems("order", "{}")).toEqual([]);
    expect(contract.eventProblems("ping", "{}")).toEqual([]);
  });

  it("fails any route the document does not describe unless it is the contract's 404", () => {
    expect(problems(answer("/api/admin/sales", 201, { anything: true }))).toMatch(
      /GET \/api\/admin\/sales is not in the document: only 404 NOT_FOUND \(or 401 under \/api\/admin\/\) may answer it, not 201/,
    );
  });
});

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { schemaFuzzRequests } from "../support/fuzz-from-schemas";
import type { FuzzRequest } from "../support/fuzz-requests";
import type { OpenApiDocument } from "../support/openapi-document";
import { documentSchemas } from "../support/openapi-schemas";

/** A hand-written document: constrained parameters of every kind and a strict body with required fields. */
const doc: OpenApiDocument = {
  openapi: "3.1.0",
  info: { title: "tiny", version: "1" },
  paths: {
    "/api/things/{id}": {
      post: {
        security: [{ operatorToken: [] }],
        parameters: [
          { name: "id", in: "path", required: true, schema: { type: "string", pattern: "^t[0-9]+$" } },
          {
            name: "limit",
            in: "query",
            required: true,
            schema: { type: "integer", minimum: 1, maximum: 50 },
          },
          { name: "X-Key", in: "header", required: false, schema: { type: "string", maxLength: 8 } },
        ],
        requestBody: {
          content: { "application/json": { schema: { $ref: "#/components/schemas/Thing" } } },
        },
        responses: { 200: { description: "ok" } },
      },
    },
    "/api/free/{anything}": {
      get: {
        parameters: [{ name: "anything", in: "path", required: true, schema: { type: "string" } }],
        responses: { 200: { description: "ok" } },
      },
    },
  },
  components: {
    schemas: {
      Thing: {
        type: "object",
        properties: {
          name: { type: "string", minLength: 1, maxLength: 20, example: "lamp" },
          colour: { type: "string", enum: ["red", "blue"] },
          count: { type: "integer", minimum: 0, maximum: 9 },
          at: { type: "string", format: "date-time" },
        },
        required: ["name", "count"],
        additionalProperties: false,
      },
    },
  },
};

const schemas = documentSchemas(doc);
const arbitrary = schemaFuzzRequests(doc, schemas, {
  params: { id: "t1" },
  bearer: { operatorToken: "Bearer admin" },
  cleanHeader: (v) => v.replace(/[^\x20-\x7e]/g, "?"),
});
const requests: FuzzRequest[] = arbitrary ? fc.sample(arbitrary, { numRuns: 2000, seed: 7 }) : [];

/** Whether the request is what the document describes (the inverse of every violation). */
function conforms(req: FuzzRequest): boolean {
  const url = new URL(`http://x${req.path}`);
  const id = decodeURIComponent(url.pathname.split("/")[3] ?? "");
  const limit = url.searchParams.get("limit");
  const key = req.headers["X-Key"];
  const body = typeof req.body === "string" ? JSON.parse(req.body) : undefined;
  return (
    /^t[0-9]+$/.test(id) &&
    limit !== null &&
    schemas.valid("/paths/~1api~1things~1{id}/post/parameters/1/schema", Number(limit)) &&
    (key === undefined || key.length <= 8) &&
    schemas.valid("/components/schemas/Thing", body)
  );
}

describe("requests drawn from a document's request schemas", () => {
  it("break exactly what the schemas say, each in its own way, with valid credentials", () => {
    expect(requests.length).toBe(2000);
    expect(requests.filter(conforms)).toEqual([]);
    expect(new Set(requests.map((r) => r.label))).toEqual(
      new Set([
        "schema POST /api/things/{id} path id",
        "schema POST /api/things/{id} query limit",
        "schema POST /api/things/{id} query limit missing",
        "schema POST /api/things/{id} header X-Key",
        "schema POST /api/things/{id} body not an object",
        "schema POST /api/things/{id} body missing name",
        "schema POST /api/things/{id} body missing count",
        "schema POST /api/things/{id} body junk property",
        "schema POST /api/things/{id} body.name",
        "schema POST /api/things/{id} body.colour",
        "schema POST /api/things/{id} body.count",
        "schema POST /api/things/{id} body.at",
      ]),
    );
    expect(requests.every((r) => r.headers.Authorization === "Bearer admin")).toBe(true);
  });

  it("leave alone what nothing can break (a path parameter that takes any string)", () => {
    expect(requests.some((r) => r.path.startsWith("/api/free/"))).toBe(false);
  });
});

import type { ErrorObject, ValidateFunction } from "ajv";
import Ajv2020 from "ajv/dist/2020";
import addFormats from "ajv-formats";
import { nodeAt, type OpenApiDocument } from "./openapi-document";

/** What a schema says about a value: null when it is valid, else ajv's errors, one per line. */
export type SchemaVerdict = string | null;

const DOCUMENT_ID = "https://openapi.test/document.json";

/**
 * JSON Schema 2020-12 validators (OpenAPI 3.1's dialect) for the schemas of one document, compiled by
 * JSON pointer the first time each is asked for. The whole document is added to ajv under an `$id`, so
 * a schema's `#/components/schemas/…` refs resolve against the document itself. OpenAPI's own keywords
 * (`example`, `discriminator`, `xml`, `externalDocs`) are annotations; formats are checked (ajv-formats).
 *
 * @example
 * const schemas = documentSchemas(doc);
 * schemas.verdict("/components/schemas/Sale", body); // null, or "/remaining must be >= 0 …"
 */
export function documentSchemas(doc: OpenApiDocument) {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  ajv.addSchema(structuredClone(doc), DOCUMENT_ID, undefined, false);
  const compiled = new Map<string, ValidateFunction>();

  const validator = (pointer: string): ValidateFunction => {
    let validate = compiled.get(pointer);
    if (!validate) {
      if (nodeAt(doc, pointer) === undefined) throw new Error(`no schema in the document at ${pointer}`);
      const fragment = pointer.split("/").map(encodeURIComponent).join("/");
      validate = ajv.compile({ $ref: `${DOCUMENT_ID}#${fragment}` });
      compiled.set(pointer, validate);
    }
    return validate;
  };

  return {
    /** Null when `value` is valid against the schema at `pointer`, else what is wrong with it. */
    verdict(pointer: string, value: unknown): SchemaVerdict {
      const validate = validator(pointer);
      return validate(value) ? null : describeErrors(validate.errors ?? []);
    },
    /** Whether `value` is valid against the schema at `pointer`. */
    valid: (pointer: string, value: unknown): boolean => validator(pointer)(value) === true,
  };
}

export type DocumentSchemas = ReturnType<typeof documentSchemas>;

function describeErrors(errors: ErrorObject[]): string {
  return errors
    .slice(0, 12)
    .map((e) => `${e.instancePath || "(root)"} ${e.message ?? e.keyword} ${JSON.stringify(e.params)}`)
    .join("\n");
}

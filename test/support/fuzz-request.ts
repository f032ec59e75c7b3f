/** One fuzzed request, what the fuzz knows of the sale under test, and a header value fetch accepts. */
import type fc from "fast-check";

export type FuzzRequest = {
  label: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
  /** a job body to sign as QStash would (with the right key): only shapes the job routes must refuse */
  signJob?: boolean;
};

export type FuzzContext = {
  saleId: string;
  productToken: string;
  shopper: string;
  admin: string;
  orderIdLike: string;
  /** requests breaking the document's request schemas, one violation each */
  fromSchemas?: fc.Arbitrary<FuzzRequest> | null;
};

/** A header value fetch accepts (Latin-1, no line breaks). */
export function safeHeader(value: string, emptyOk = false): string {
  const cleaned = value.replace(/[^\x20-\x7e]/g, "?");
  return cleaned || (emptyOk ? "" : "x");
}

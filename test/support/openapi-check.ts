/**
 * Every answer the tests get from the engine, checked against the OpenAPI document that same server
 * publishes at `GET /api/openapi.json` (fetched and compiled once per server; validators kept per
 * operation and status): so the description cannot drift from the server. A route the document does
 * not describe fails, unless the server answers it the contract's 404 NOT_FOUND (it serves nothing the
 * document leaves out; see openapi-contract.ts). Only the API is in scope: pages and assets (paths
 * outside `/api/`) and the document itself are not described by it. The stand-ins are not the engine:
 * tests call them with plain `fetch`.
 *
 * @example
 * const res = await checkedFetch(`${app.worker.url}/api/sales`); // throws when the answer breaks the document
 */
import { type Contract, contractOf, type Exchange } from "./openapi-contract";
import type { OpenApiDocument } from "./openapi-document";

export type { Exchange };

const DOCUMENT_PATH = "/api/openapi.json";

const contracts = new Map<string, Promise<Contract>>();
const documents = new Map<string, Promise<OpenApiDocument>>();

/** The document a server publishes, read once per origin (a failed read is retried next time). */
export function documentAt(origin: string): Promise<OpenApiDocument> {
  let doc = documents.get(origin);
  if (!doc) {
    doc = fetch(`${origin}${DOCUMENT_PATH}`).then(async (res) => {
      const text = await res.text();
      if (res.status !== 200)
        throw new Error(`GET ${origin}${DOCUMENT_PATH}: ${res.status} ${text.slice(0, 200)}`);
      return JSON.parse(text) as OpenApiDocument;
    });
    documents.set(origin, doc);
    doc.catch(() => documents.delete(origin));
  }
  return doc;
}

/** The checks of the document a server publishes, compiled once per origin. */
export function contractAt(origin: string): Promise<Contract> {
  let contract = contracts.get(origin);
  if (!contract) {
    contract = documentAt(origin).then(contractOf);
    contracts.set(origin, contract);
    contract.catch(() => contracts.delete(origin));
  }
  return contract;
}

/** Whether the document describes this URL's kind of answer (the API, not pages or the document itself). */
export function inScope(url: string): boolean {
  const { pathname } = new URL(url);
  return pathname.startsWith("/api/") && pathname !== DOCUMENT_PATH;
}

/** What is wrong with an answer, as a message naming the request, status, problems and body; or null. */
export async function exchangeProblems(ex: Exchange): Promise<string | null> {
  if (!inScope(ex.url)) return null;
  const problems = (await contractAt(new URL(ex.url).origin)).problems(ex);
  if (problems.length === 0) return null;
  const { pathname, search } = new URL(ex.url);
  const body = ex.text === undefined ? "(a stream)" : ex.text.slice(0, 800) || "(empty)";
  return [
    `OpenAPI: ${ex.method.toUpperCase()} ${pathname}${search} answered ${ex.status} (${ex.headers.get("content-type")}), which the document does not allow:`,
    ...problems.map((p) => `  - ${p.replaceAll("\n", "\n      ")}`),
    `  body: ${body}`,
  ].join("\n");
}

/** The error a test fails with when an answer breaks the document. */
export class ContractViolation extends Error {
  override name = "ContractViolation";
}

/** Throws a {@link ContractViolation} when the answer breaks the document. */
export async function checkExchange(ex: Exchange): Promise<void> {
  const problem = await exchangeProblems(ex);
  if (problem) throw new ContractViolation(problem);
}

/** Checks the data of one stream event from `url` against the schema its event name stands for. */
export async function checkEvent(url: string, event: string, data: string): Promise<void> {
  if (!inScope(url)) return;
  const problems = (await contractAt(new URL(url).origin)).eventProblems(event, data);
  if (problems.length > 0)
    throw new ContractViolation(
      [
        `OpenAPI: an event "${event}" of ${new URL(url).pathname} breaks the document:`,
        ...problems.map((p) => `  - ${p.replaceAll("\n", "\n      ")}`),
        `  data: ${data}`,
      ].join("\n"),
    );
}

const isStream = (res: Response) => res.headers.get("content-type")?.startsWith("text/event-stream") === true;

/**
 * `fetch` for the engine: the answer is read, checked against the document, and handed back as a
 * Response with the same status, headers and body. A stream is checked by its status and headers and
 * handed back unread (its reader checks the events, see sse.ts).
 */
export async function checkedFetch(url: string, init: RequestInit = {}): Promise<Response> {
  const res = await fetch(url, init);
  const seen = {
    method: init.method ?? "GET",
    url: res.url || url,
    status: res.status,
    headers: res.headers,
  };
  if (isStream(res)) {
    await checkExchange(seen).catch(async (error) => {
      await res.body?.cancel();
      throw error;
    });
    return res;
  }
  const text = await res.text();
  await checkExchange({ ...seen, text });
  const empty = [101, 204, 205, 304].includes(res.status);
  return new Response(empty ? null : text, {
    status: res.status,
    statusText: res.statusText,
    headers: res.headers,
  });
}

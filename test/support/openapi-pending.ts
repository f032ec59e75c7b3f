import type { OpenApiDocument } from "./openapi-document";

/**
 * Route areas whose description is being written on other branches (issue 12): a request in one of
 * them is not checked while the document describes nothing in that area at all. The moment one path of
 * an area is documented, the whole area is checked like every other route (an undocumented one among
 * them fails). Transitional: once every area is documented this list is dead and should be deleted
 * with it (the checker then needs no change).
 */
export const PENDING_AREAS: readonly { area: string; paths: RegExp }[] = [
  { area: "operator routes and stream", paths: /^\/api\/admin\// },
  { area: "order routes and stream", paths: /^\/api\/orders\// },
  { area: "job routes", paths: /^\/api\/jobs\// },
  { area: "local dev routes", paths: /^\/api\/dev\// },
  { area: "sale stream", paths: /^\/api\/sales\/[^/]+\/events$/ },
];

/** The pending area a request path belongs to, when that area has no documented path yet. */
export function pendingArea(doc: OpenApiDocument, pathname: string): string | null {
  const documented = Object.keys(doc.paths ?? {});
  const hit = PENDING_AREAS.find(
    ({ paths }) => paths.test(pathname) && !documented.some((template) => paths.test(template)),
  );
  return hit?.area ?? null;
}

/**
 * `npm run client:generate`: writes client/openapi.json (the engine's document, built from the routes'
 * schemas without a server) and client/schema.d.ts (its types, by openapi-typescript). Run it after any
 * change to a route's schema; test/unit/client-schema.test.ts fails until then.
 */
import { writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";
import { documentText, schemaText } from "./codegen";

const here = import.meta.dirname;
// The routes import Lua scripts as text and CommonJS packages: bundled as the server runtimes' build does.
const outfile = resolve(here, "../.wrangler/client/build-document.mjs");
await build({
  entryPoints: [join(here, "build-document.ts")],
  outfile,
  bundle: true,
  format: "esm",
  platform: "node",
  target: "es2022",
  loader: { ".lua": "text" },
  banner: {
    js: 'import { createRequire as __cr } from "node:module"; const require = __cr(import.meta.url);',
  },
  logLevel: "error",
});
const { buildDocument } = (await import(pathToFileURL(outfile).href)) as typeof import("./build-document");
const document = await buildDocument();
await writeFile(join(here, "openapi.json"), documentText(document));
await writeFile(join(here, "schema.d.ts"), await schemaText(document));
console.log("wrote client/openapi.json and client/schema.d.ts");

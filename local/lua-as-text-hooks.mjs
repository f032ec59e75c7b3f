/** Module hook (see lua-as-text.mjs): a `.lua` file loads as a module whose default export is its text. */
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";

export async function load(url, context, next) {
  if (!url.endsWith(".lua")) return next(url, context);
  const text = await readFile(fileURLToPath(url), "utf8");
  return { format: "module", shortCircuit: true, source: `export default ${JSON.stringify(text)};` };
}

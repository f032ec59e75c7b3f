/** Reads a `KEY=value` file (.dev.vars, .dev.vars.example): one setting a line, values trimmed. */
import { readFileSync } from "node:fs";

export function readVarsFile(path: string): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const [, key, value] of readFileSync(path, "utf8").matchAll(/^([A-Z0-9_]+)=(.*)$/gm))
    vars[key ?? ""] = (value ?? "").trim();
  return vars;
}

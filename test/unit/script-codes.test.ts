import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { adjustStockScript } from "../../src/stock/adjust";
import { ScriptCode, type ScriptCodeName } from "../../src/stock/codes";
import { debitStockScript } from "../../src/stock/debit";
import { releaseLockScript } from "../../src/stock/lock";
import { openRoomScript } from "../../src/stock/open-room";
import { setSalePausedScript } from "../../src/stock/pause";
import { initSaleScript } from "../../src/stock/preheat";
import { rebuildSaleScript } from "../../src/stock/replace-state";
import { reserveStockScript } from "../../src/stock/reserve";
import { restoreStockScript } from "../../src/stock/restore";
import { roomJournalScript } from "../../src/stock/room-journal";
import { roomJournalAckScript } from "../../src/stock/room-journal-ack";
import { roomLineScript } from "../../src/stock/room-line";
import { roomRestoreScript } from "../../src/stock/room-restore";
import { roomSealScript } from "../../src/stock/room-seal";
import { roomStepScript } from "../../src/stock/room-step";
import type { LuaScript } from "../../src/stock/script";
import { voidReservationScript } from "../../src/stock/void";

const root = resolve(import.meta.dirname, "../..");
const scripts: LuaScript[] = [
  adjustStockScript,
  debitStockScript,
  initSaleScript,
  openRoomScript,
  rebuildSaleScript,
  releaseLockScript,
  roomJournalScript,
  roomJournalAckScript,
  roomLineScript,
  roomRestoreScript,
  roomSealScript,
  roomStepScript,
  reserveStockScript,
  restoreStockScript,
  setSalePausedScript,
  voidReservationScript,
];
const source = (name: string) => readFileSync(join(root, "lua", `${name}.lua`), "utf8");
const header = (lua: string) => lua.slice(0, lua.indexOf("]]"));
const body = (lua: string) => lua.slice(lua.indexOf("]]"));

/** The codes a header names in its Returns section: `{13, …}  ALREADY_APPLIED` or `20  ALREADY_EXISTS`. */
function documentedCodes(lua: string): Map<number, string> {
  const returns = header(lua).slice(header(lua).indexOf("Returns"));
  const codes = new Map<number, string>();
  for (const m of returns.matchAll(/^\s+(?:\{(\d+)[^}\n]*\}|(\d+))\s+([A-Z][A-Z_]+)\b/gm)) {
    codes.set(Number(m[1] ?? m[2]), m[3] as string);
  }
  return codes;
}

describe("the Lua scripts' return codes: one table, named in every header", () => {
  it("every script of lua/ has its module in src/stock/, named after it", () => {
    const files = readdirSync(join(root, "lua")).filter((f) => f.endsWith(".lua"));
    expect(scripts.map((s) => `${s.name}.lua`).sort()).toEqual(files.sort());
  });

  it.each(scripts.map((s) => [s.name, s] as const))("%s: its pinned SHA-1 is its source's", (_, script) => {
    const sha1 = createHash("sha1").update(source(script.name)).digest("hex");
    expect(script.source).toBe(source(script.name));
    expect(script.sha1, `update the pin in src/stock/${script.name}.ts`).toBe(sha1);
  });

  it.each(scripts.map((s) => [s.name] as const))("%s: each code its header names is the table's", (name) => {
    const codes = documentedCodes(source(name));
    expect(codes.size).toBeGreaterThan(1);
    for (const [code, codeName] of codes) {
      expect(codeName in ScriptCode, `${codeName} is not in src/stock/codes.ts`).toBe(true);
      expect(ScriptCode[codeName as ScriptCodeName], `${name}.lua names ${code} ${codeName}`).toBe(code);
    }
  });

  it.each(scripts.map((s) => [s.name] as const))(
    "%s: every code its body returns is in its header",
    (name) => {
      const documented = documentedCodes(source(name));
      const returned = [...body(source(name)).matchAll(/return \{?(\d+)[,}\s]/g)].map((m) => Number(m[1]));
      const assigned = [...body(source(name)).matchAll(/local (?:code|reply) = \{?(\d+)/g)].map((m) =>
        Number(m[1]),
      );
      const codes = [
        ...returned,
        ...assigned,
        ...[...body(source(name)).matchAll(/code = (\d+)/g)].map((m) => Number(m[1])),
      ];
      expect(codes.length).toBeGreaterThan(0);
      for (const code of codes) expect(documented.has(code), `${name}.lua returns ${code}`).toBe(true);
    },
  );

  it("no two names share a number", () => {
    const numbers = Object.values(ScriptCode);
    expect(new Set(numbers).size).toBe(numbers.length);
  });
});

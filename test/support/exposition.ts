/** A sample line of the text exposition: `name{label="value",…} value`. */
const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*\})? (\S+)$/;

/**
 * The exposition parsed strictly: every line a `# HELP`, a `# TYPE` or a sample with a number; the
 * samples by `name{labels}` as written.
 */
export function parseExposition(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (line === "" || /^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* .+$/.test(line)) continue;
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`not an exposition line: ${line}`);
    const value = Number(match[3] === "+Inf" ? Infinity : match[3]);
    if (Number.isNaN(value)) throw new Error(`not a number: ${line}`);
    samples.set(`${match[1]}${match[2] ?? ""}`, value);
  }
  return samples;
}

import { h } from "./dom.js";

/** One line of a description: `code spans` become <code>, the rest stays text (never parsed as HTML). */
export function inlineText(text) {
  return String(text)
    .split("`")
    .map((part, i) => (i % 2 === 1 ? h("code", {}, part) : part))
    .filter((part) => part !== "");
}

/**
 * A description of the document as paragraphs: a blank line starts a new one, a single line break is a
 * space (descriptions are wrapped in the source), backticks mark code. Only text nodes are created.
 *
 * @example
 * h("div", { class: "prose" }, ...paragraphs(op.description))
 */
export function paragraphs(text) {
  if (typeof text !== "string" || !text.trim()) return [];
  return text
    .split(/\n\s*\n/)
    .map((block) => block.replace(/\s*\n\s*/g, " ").trim())
    .filter(Boolean)
    .map((block) => h("p", {}, ...inlineText(block)));
}

/** The paragraphs in a `.prose` block, or null when there is no description. */
export function prose(text, className = "prose") {
  const blocks = paragraphs(text);
  return blocks.length ? h("div", { class: className }, ...blocks) : null;
}

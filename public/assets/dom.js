/**
 * A tiny element builder: attributes, properties (`on*` handlers, `hidden`, `disabled`), children.
 * `style` goes through the CSSOM, which the pages' Content-Security-Policy (no inline styles) allows.
 *
 * @example
 * h("button", { class: "btn", onclick: () => buy() }, "Buy now")
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") el.addEventListener(name.slice(2), value);
    else if (name === "hidden" || name === "disabled" || name === "value") el[name] = value;
    else if (name === "style") el.style.cssText = value;
    else el.setAttribute(name, value === true ? "" : String(value));
  }
  el.append(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
  return el;
}

/** The element with this id (throws early when the page and the script disagree). */
export function byId(id) {
  const el = document.getElementById(id);
  if (!el) throw new Error(`#${id} is missing from the page`);
  return el;
}

/** Sets an element's text only when it changed (keeps screen readers and layout calm). */
export function setText(el, text) {
  if (el.textContent !== text) el.textContent = text;
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

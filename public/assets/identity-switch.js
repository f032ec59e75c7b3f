import { byId } from "./dom.js";

/**
 * Asks in the page whether a handed-over token may replace the signed-in shopper. Resolves true only
 * when the visitor picks "Switch"; "Stay signed in" and closing the dialog (Escape) keep who is signed
 * in. Staying is the default button.
 *
 * @example
 * if (await confirmSwitch(current, next)) adoptShopper(next);
 */
export function confirmSwitch(current, next) {
  const dialog = byId("switch-dialog");
  byId("switch-current").textContent = current.userId;
  byId("switch-next").textContent = next.userId;
  byId("switch-keep").textContent = `Stay signed in as ${current.userId}`;
  byId("switch-accept").textContent = `Switch to ${next.userId}`;
  dialog.returnValue = "";
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "switch"), { once: true });
    dialog.showModal();
    byId("switch-keep").focus();
  });
}

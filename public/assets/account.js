import { byId, h } from "./dom.js";
import { currentShopper, devSignInAvailable, signInAs, signOut, useToken } from "./identity.js";

/**
 * The header's account area and the sign-in dialog. Offers "sign in as <user id>" when the deployment
 * has the dev-only route, and always accepts a pasted shop token. `onChange(shopper)` runs after each change.
 *
 * @example
 * const account = mountAccount({ onChange: (s) => saleView.setShopper(s) });
 * account.open(); // from a "Sign in to buy" button
 */
export function mountAccount({ onChange }) {
  const area = byId("account");
  const dialog = byId("signin-dialog");
  const devForm = byId("dev-signin");
  const tokenForm = byId("token-signin");
  const details = byId("token-details");
  const error = byId("signin-error");
  let devProbe = null;

  function render() {
    const shopper = currentShopper();
    if (shopper) {
      area.replaceChildren(
        h(
          "span",
          { class: "account-user", title: shopper.userId },
          h("span", { class: "avatar", "aria-hidden": "true" }, shopper.userId.slice(0, 1)),
          h("span", { id: "account-name" }, shopper.userId),
        ),
        h("button", { class: "link-btn", type: "button", onclick: leave }, "Sign out"),
      );
    } else {
      area.replaceChildren(
        h(
          "button",
          { class: "btn btn-ghost btn-small", type: "button", id: "signin-open", onclick: open },
          "Sign in",
        ),
      );
    }
  }

  function leave() {
    signOut();
    render();
    onChange(null);
  }

  function done(result) {
    if (result.error) {
      error.textContent = result.error;
      return;
    }
    error.textContent = "";
    dialog.close();
    render();
    onChange(result);
  }

  async function open() {
    error.textContent = "";
    devProbe ??= devSignInAvailable();
    dialog.showModal();
    const dev = await devProbe;
    devForm.hidden = !dev;
    details.open = !dev;
    (dev ? byId("user-id") : byId("token-input")).focus();
  }

  dialog.addEventListener("input", () => {
    error.textContent = "";
  });
  devForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    const userId = byId("user-id").value;
    if (!/^[\w.@-]{1,64}$/.test(userId.trim())) {
      error.textContent = "Use 1 to 64 letters, digits, or . _ @ -";
      return;
    }
    done(await signInAs(userId));
  });
  tokenForm.addEventListener("submit", (event) => {
    event.preventDefault();
    done(useToken(byId("token-input").value));
  });

  render();
  return { open, render };
}

import { mountAccount } from "./account.js";
import { byId } from "./dom.js";
import { adoptShopper, currentShopper, takeTokenFromUrl } from "./identity.js";
import { confirmSwitch } from "./identity-switch.js";
import { mountSaleList } from "./sale-list.js";
import { mountSaleView } from "./sale-view.js";

/** The shopper page: `/` lists the sales, `/?sale=<id>` shows one. Links navigate without a reload. */
const handedOver = takeTokenFromUrl();
const account = mountAccount({ onChange: (shopper) => saleView.setShopper(shopper) });
const saleView = mountSaleView({ account, onSignedOut: () => account.render() });
const saleList = mountSaleList();
let current = null;

function route() {
  const saleId = new URLSearchParams(location.search).get("sale");
  const next = saleId ? `sale:${saleId}` : "list";
  if (next === current) return;
  if (current === "list") saleList.hide();
  else if (current) saleView.hide();
  current = next;
  byId("list-view").hidden = Boolean(saleId);
  byId("sale-view").hidden = !saleId;
  if (saleId) saleView.show(saleId, currentShopper());
  else {
    document.title = "Drop · Flash sales";
    saleList.show();
  }
  window.scrollTo(0, 0);
}

function navigate(url) {
  history.pushState(null, "", url);
  route();
  // back from a checkout page: the order panel follows the order (paid once the provider says so)
  const back = new URLSearchParams(location.search).get("checkout");
  if (back) {
    const url = new URL(location.href);
    url.searchParams.delete("checkout");
    url.searchParams.delete("order");
    history.replaceState(null, "", url.pathname + url.search);
    if (back === "cancelled")
      console.info("checkout left without paying; the order stays reserved until its timer runs out");
  }
  byId("main").focus({ preventScroll: true });
}

document.addEventListener("click", (event) => {
  const link = event.target instanceof Element ? event.target.closest("a[href]") : null;
  if (
    !link ||
    event.defaultPrevented ||
    event.button !== 0 ||
    event.metaKey ||
    event.ctrlKey ||
    event.shiftKey
  )
    return;
  const url = new URL(link.href);
  if (url.origin !== location.origin || url.pathname !== "/") return;
  event.preventDefault();
  navigate(url.pathname + url.search);
});
window.addEventListener("popstate", route);

if (handedOver?.error) console.warn(handedOver.error);
if (handedOver?.switchTo) {
  confirmSwitch(handedOver.current, handedOver.switchTo).then((switching) => {
    if (!switching) return;
    const shopper = adoptShopper(handedOver.switchTo);
    account.render();
    saleView.setShopper(shopper);
  });
}
route();
// back from a checkout page: the order panel follows the order (paid once the provider says so)
const back = new URLSearchParams(location.search).get("checkout");
if (back) {
  const url = new URL(location.href);
  url.searchParams.delete("checkout");
  url.searchParams.delete("order");
  history.replaceState(null, "", url.pathname + url.search);
  if (back === "cancelled")
    console.info("checkout left without paying; the order stays reserved until its timer runs out");
}

// A shopper's journey over the API (api.js): browse, search, product,
// account, cart, checkout, orders. Plain DOM, hash routes, no build step.

const PAGE = 12;
const view = document.getElementById("view");
const errorBox = document.getElementById("error");

const h = (tag, attrs = {}, ...children) => {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null) el.setAttribute(k, v);
  }
  el.append(...children.flat().filter((c) => c !== null && c !== undefined));
  return el;
};
const render = (...nodes) => view.replaceChildren(...nodes);

// Errors from the API's body: its message and correlation id on top, each
// field error next to the input of the same name.
function showError(e, form) {
  document.querySelectorAll(".field-error").forEach((el) => el.remove());
  if (!(e instanceof ApiError)) {
    errorBox.textContent = String(e);
    errorBox.hidden = false;
    return;
  }
  errorBox.textContent = `${e.message} (${e.body.code || e.status}; Correlation-Id ${e.correlationId})`;
  errorBox.hidden = false;
  for (const [field, message] of Object.entries(e.fields)) {
    const input = form && form.querySelector(`[name="${field}"]`);
    if (input) input.after(h("span", { class: "field-error", "data-field": field }, message));
  }
}
const clearError = () => { errorBox.hidden = true; };
const guarded = (fn, form) => async (event) => {
  if (event) event.preventDefault();
  clearError();
  try { await fn(event); } catch (e) { showError(e, form); }
};

// The demo catalog's media name a host that does not exist: an image that
// does not load shows a placeholder drawn here, with its alt text.
function placeholder(label) {
  let hue = 0;
  for (const c of label) hue = (hue * 31 + c.charCodeAt(0)) % 360;
  const safe = label.replace(/[<>&"]/g, "").slice(0, 28);
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="400" height="500"><rect width="100%" height="100%" fill="hsl(${hue},35%,82%)"/>` +
    `<text x="50%" y="50%" font-family="sans-serif" font-size="22" text-anchor="middle" fill="#333">${safe}</text></svg>`;
  return `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`;
}
function image(m) {
  const alt = text(m.alt);
  return h("img", { src: m.url, alt, onerror: (e) => {
    if (!e.target.src.startsWith("data:")) e.target.src = placeholder(alt || "Product image");
  } });
}

function card(p) {
  const media = (p.media && p.media[0]) || null;
  return h("div", { class: "card" },
    media ? image(media) : null,
    h("a", { href: `#/product/${p.id}` }, text(p.name)),
    h("div", { class: "brand-name" }, p.brand || ""),
    h("div", { class: "price" }, money(p.price)));
}

async function catalog(params) {
  const tree = await api.tree();
  const leaves = tree.roots.flatMap((r) => r.children.flatMap((c) => (c.children.length ? c.children : [c])));
  const category = params.get("category") || (leaves[0] && leaves[0].id);
  const offset = Number(params.get("offset") || 0);
  const query = new URLSearchParams({ limit: PAGE, offset, status: "active", category, currency: shop.currency });
  if (params.get("brand")) query.set("brand", params.get("brand"));
  if (params.get("inStock") === "true") query.set("inStock", "true");
  const page = await api.products(query);
  const go = (changes) => {
    const next = new URLSearchParams(params);
    for (const [k, v] of Object.entries(changes)) (v ? next.set(k, v) : next.delete(k));
    location.hash = `#/?${next}`;
  };
  const select = h("select", { name: "category", onchange: (e) => go({ category: e.target.value, offset: 0 }) },
    leaves.map((c) => h("option", c.id === category ? { value: c.id, selected: "" } : { value: c.id }, text(c.name))));
  const brand = h("input", { name: "brand", placeholder: t("brand"), value: params.get("brand") || "" });
  const stock = h("input", params.get("inStock") === "true" ? { type: "checkbox", checked: "" } : { type: "checkbox" });
  const filters = h("form", { class: "filters", onsubmit: (e) => { e.preventDefault(); go({ brand: brand.value, inStock: stock.checked ? "true" : "", offset: 0 }); } },
    select, brand, h("label", {}, stock, ` ${t("inStock")}`), h("button", {}, t("filter")));
  const pager = h("div", { class: "pager" },
    h("button", { disabled: offset === 0 ? "" : null, onclick: () => go({ offset: Math.max(0, offset - PAGE) }) }, t("previous")),
    h("span", {}, `${page.total ? offset + 1 : 0}-${offset + page.count} ${t("of")} ${page.total}`),
    h("button", { id: "next-page", disabled: offset + PAGE >= page.total ? "" : null, onclick: () => go({ offset: offset + PAGE }) }, t("next")));
  render(filters, h("div", { class: "grid", id: "results" }, page.results.map(card)), pager);
}

async function search(params) {
  const page = await api.search(new URLSearchParams({ query: params.get("q"), limit: PAGE, currency: shop.currency }));
  render(h("h2", {}, `${page.total} ${t("resultsFor")} "${params.get("q")}"`), h("div", { class: "grid", id: "results" }, page.results.map(card)));
}

async function product(id) {
  const p = await api.product(id, shop.currency);
  const variants = p.variants || [p.masterVariant];
  const firstInStock = (variants.find((v) => v.availability.quantity > 0) || variants[0]).id;
  const label = (v) => `${Object.values(v.attributes).join(" / ")} - ${money(v.price)} (${v.availability.quantity} ${t("left")})`;
  const variant = h("select", { name: "variantId", "aria-label": t("variant") }, variants.map((v) =>
    h("option", v.id === firstInStock ? { value: v.id, selected: "" } : { value: v.id }, label(v))));
  const quantity = h("input", { name: "quantity", type: "number", min: 1, max: 99, value: 1, "aria-label": t("quantity") });
  const stock = h("p", { id: "stock" });
  const showStock = () => {
    const v = variants.find((x) => String(x.id) === variant.value);
    stock.textContent = v.availability.quantity > 0 ? `${v.availability.quantity} ${t("left")}` : "0";
    stock.className = v.availability.quantity > 0 ? "in-stock" : "sold-out";
  };
  variant.addEventListener("change", showStock);
  showStock();
  const form = h("form", { class: "inline" }, variant, quantity, h("button", { id: "add-to-cart" }, t("addToCart")));
  form.addEventListener("submit", guarded(async () => {
    // No account needed: a shopper without a session shops as a guest.
    if (!session.access) session.save(await api.guest());
    const cart = await currentCart();
    await api.addLine(cart, { productId: p.id, variantId: Number(variant.value), quantity: Number(quantity.value) });
    location.hash = "#/cart";
  }, form));
  const media = (p.media || []).filter((m) => m.type === "image");
  render(h("div", { class: "product" },
    h("div", { class: "media" }, media.map(image)),
    h("div", { class: "details" }, h("h2", {}, text(p.name)), h("p", { class: "brand-name" }, p.brand),
      h("p", { class: "price" }, money(p.price)), h("p", {}, text(p.description)), stock, form)));
}

function account() {
  const field = (name, type = "text") => h("label", {}, t(name), h("input", { name, type }));
  const login = h("form", { id: "login" }, h("h2", {}, t("logIn")), field("emailAddress", "email"), field("password", "password"), h("button", {}, t("logIn")));
  const signUp = h("form", { id: "sign-up" }, h("h2", {}, t("signUp")), field("emailAddress", "email"), field("password", "password"),
    field("firstName"), field("lastName"), h("button", {}, t("signUp")));
  // The dev captcha accepts any response; a real shop renders reCAPTCHA here.
  const values = (form) => ({ ...Object.fromEntries(new FormData(form)), gRecaptchaResponse: "dev-captcha" });
  const start = async (credentials) => {
    const result = await api.login(credentials);
    session.save(result);
    // A guest who logs in: their cart is now the customer's (merged).
    if (result.mergeReport && result.mergeReport.cartId) {
      sessionStorage.setItem("cart", result.mergeReport.cartId);
      sessionStorage.setItem("merge", JSON.stringify(result.mergeReport));
    } else {
      sessionStorage.removeItem("cart");
    }
    location.hash = "#/";
  };
  login.addEventListener("submit", guarded(() => start(values(login)), login));
  // Sign-up answers a new and a taken address alike (202): a new account
  // logs in at once; for a taken one the login fails and the shopper is
  // pointed to their mail, as the answer says.
  signUp.addEventListener("submit", guarded(async () => {
    const body = values(signUp);
    const accepted = await api.signUp(body);
    try {
      await start({ emailAddress: body.emailAddress, password: body.password, gRecaptchaResponse: body.gRecaptchaResponse });
    } catch (e) {
      if (e.status === 401) throw new Error(accepted.message);
      throw e;
    }
  }, signUp));
  render(h("div", { class: "columns" }, login, signUp));
}

async function currentCart() {
  let id = sessionStorage.getItem("cart");
  if (!id) {
    id = (await api.newCart(shop.currency)).id;
    sessionStorage.setItem("cart", id);
  }
  return id;
}

// What merging the guest's cart at login did, shown once.
function mergeNotice() {
  const report = JSON.parse(sessionStorage.getItem("merge") || "null");
  sessionStorage.removeItem("merge");
  if (!report) return null;
  const dropped = report.linesDropped.map((d) => `${d.productId}: ${d.reason}`);
  return h("p", { id: "merge-report" },
    `Your guest cart was merged: ${report.linesAdded.length} added, ${report.quantitiesChanged.length} changed, ` +
    `${report.linesDropped.length} dropped${dropped.length ? ` (${dropped.join("; ")})` : ""}.`);
}

// Totals as a session or an order has them: each part, the tax by name
// and rate (included in the prices, or added to them, as the market says).
function totalsTable(totals, taxLines) {
  const row = (label, m, attrs = {}) => h("tr", attrs, h("th", {}, label), h("td", {}, money(m)));
  const included = shop.market && shop.market.prices === "taxIncluded" ? ` (${t("included")})` : "";
  return h("table", { id: "totals", class: "totals" },
    row(t("subtotal"), totals.subtotal),
    totals.discount && totals.discount.centAmount ? row(t("discount"), totals.discount) : null,
    row(t("shipping"), totals.shipping),
    h("tbody", { id: "tax-lines" }, (taxLines || []).map((l) =>
      row(`${l.name} ${percent(l.rate)}${included}`, l.amount, { class: "tax-line" }))),
    row(t("total"), totals.total, { class: "grand-total" }));
}

const addressFields = ["firstName", "lastName", "streetName", "streetNumber", "city", "postalCode", "state"];

async function cart() {
  if (!session.access || !sessionStorage.getItem("cart")) { render(h("h2", {}, t("cart")), h("p", {}, t("empty"))); return; }
  const c = await api.cart(await currentCart());
  const again = guarded(() => cart());
  const lines = h("table", { id: "lines" }, c.lineItems.map((l) => {
    const qty = h("input", { type: "number", min: 1, max: 99, value: l.quantity, name: `quantity-${l.id}`, "aria-label": t("quantity") });
    qty.addEventListener("change", guarded(async () => { await api.setQuantity(c.id, l.id, Number(qty.value)); await again(); }));
    const remove = h("button", { class: "remove", type: "button" }, t("remove"));
    remove.addEventListener("click", guarded(async () => { await api.removeLine(c.id, l.id); await again(); }));
    return h("tr", { "data-line": l.id }, h("td", {}, h("a", { href: `#/product/${l.productId}` }, text(l.name))),
      h("td", {}, qty), h("td", {}, money(l.unitPrice)), h("td", {}, money(l.totalPrice)), h("td", {}, remove));
  }));
  const code = h("form", { class: "inline", id: "discount" }, h("input", { name: "discountCode", placeholder: t("discountCode") }), h("button", {}, t("apply")));
  code.addEventListener("submit", guarded(async () => {
    await api.applyCode(c.id, new FormData(code).get("discountCode"));
    await cart();
  }, code));
  const field = (name, value = "") => h("label", {}, t(name), h("input", { name, value }));
  const countries = (shop.market ? shop.market.countries : ["AU"]).map((c) => h("option", { value: c }, c));
  const address = h("form", { id: "checkout" }, h("h3", {}, t("shipTo")), addressFields.map((f) => field(f)),
    h("label", {}, t("country"), h("select", { name: "country" }, countries)), h("button", {}, t("checkout")));
  address.addEventListener("submit", guarded(async () => {
    const fields = Object.fromEntries([...new FormData(address)].filter(([, v]) => v !== ""));
    // A guest has no address book: the address goes in the checkout body.
    const to = session.guest
      ? { shippingAddress: fields }
      : { shippingAddressId: (await api.addAddress(fields)).id };
    renderCheckout(await api.checkout(c.id, to));
  }, address));
  const summary = h("p", { id: "cart-total", "data-discount": c.discountTotal ? c.discountTotal.centAmount : 0 },
    `${t("discount")} ${money(c.discountTotal)}, ${t("total")} ${money(c.totalPrice)}`);
  render(h("h2", {}, t("cart")), lines, summary, code, c.lineItems.length ? address : h("p", {}, t("empty")));
}

// The test provider's cards (Stripe's test methods): what a shop running
// PAYMENT_PROVIDER=test takes. A Stripe shop collects a card with Stripe.js.
const TEST_CARDS = [["pm_card_visa", "Visa •••• 4242"], ["pm_card_visa_chargeDeclined", "Visa •••• 0002 (declined)"]];

// The session: its shipping methods (another one reprices it), its
// totals and tax, the card, then pay and place the order.
function renderCheckout(checkout) {
  const options = h("fieldset", { id: "shipping" }, h("legend", {}, t("shipping")),
    checkout.shippingOptions.map((o) => {
      const radio = h("input", { type: "radio", name: "shipping", value: o.id, checked: o.id === checkout.shippingMethodId ? "" : null });
      radio.addEventListener("change", guarded(async () => renderCheckout(await api.ship(checkout.id, o.id))));
      return h("label", {}, radio, ` ${text(o.name)} (${o.minDays}-${o.maxDays} ${t("days")}) ${money(o.price)}`);
    }));
  const card = h("select", { id: "card" }, TEST_CARDS.map(([id, label]) => h("option", { value: id }, label)));
  const confirm = h("button", { id: "confirm" }, t("pay"));
  confirm.addEventListener("click", guarded(async () => {
    // A declined card answers 402 PAYMENT_DECLINED (shown): choose another.
    await api.pay(checkout.id, card.value);
    const done = await api.confirm(checkout.id);
    sessionStorage.removeItem("cart");
    // A guest has no order history: the confirmation is the receipt.
    if (session.guest) render(h("h2", {}, t("thankYou")), h("p", { id: "placed" }, `${t("placed")}: ${done.orderId}`));
    else location.hash = `#/orders?placed=${done.orderId}`;
  }));
  render(h("h2", {}, t("checkout")), options, totalsTable(checkout.totals, checkout.taxLines),
    h("p", { class: "hold" }, `${t("heldUntil")} ${when(checkout.expiresAt)}`),
    h("label", {}, `${t("card")} `, card), confirm);
}

async function orders(params) {
  if (!session.customer) { location.hash = "#/account"; return; }
  const page = await api.orders();
  const placed = params.get("placed");
  render(h("h2", {}, t("orders")), placed ? h("p", { id: "placed" }, `${t("placed")}: ${placed}`) : null,
    h("table", { id: "orders" },
      h("tr", {}, h("th", {}, t("order")), h("th", {}, t("date")), h("th", {}, t("status")), h("th", {}, t("total"))),
      page.results.map((o) =>
        h("tr", { "data-order": o.id }, h("td", {}, h("a", { href: `#/order/${o.id}` }, o.orderNumber)),
          h("td", {}, when(o.createdAt)), h("td", {}, o.status), h("td", {}, money(o.totals.total))))));
}

// One order: what was bought, where it goes, how it was paid, and its totals.
async function order(id) {
  if (!session.customer) { location.hash = "#/account"; return; }
  const o = await api.order(id);
  const a = o.shippingAddress || {};
  const shipping = o.shippingMethod ? `${text(o.shippingMethod.name)}, ${money(o.shippingMethod.price)}` : "";
  render(h("div", { id: "order" },
    h("h2", {}, `${t("order")} ${o.orderNumber}`),
    h("p", { class: "status" }, `${t("status")}: ${o.status} · ${when(o.createdAt)}`),
    h("table", { id: "order-lines" }, o.lineItems.map((l) =>
      h("tr", {}, h("td", {}, text(l.name)), h("td", {}, `× ${l.quantity}`), h("td", {}, money(l.totalPrice))))),
    totalsTable(o.totals, o.taxLines),
    h("p", { class: "ship-to" }, `${t("shipTo")}: ${[a.firstName, a.lastName].join(" ")}, ${[a.streetNumber, a.streetName].join(" ").trim()}, ${a.city} ${a.postalCode} ${a.country}${shipping ? ` · ${shipping}` : ""}`),
    o.payment ? h("p", { class: "payment" }, `${t("payment")}: ${o.payment.status}`) : null,
    h("a", { href: "#/orders" }, t("back"))));
}

async function route() {
  const [path, query] = location.hash.slice(1).split("?");
  const params = new URLSearchParams(query || "");
  const loggedIn = session.customer;
  document.getElementById("account-link").hidden = loggedIn;
  document.getElementById("orders-link").hidden = !loggedIn;
  document.getElementById("logout").hidden = !loggedIn;
  clearError();
  const shown = document.getElementById("merge-report");
  if (shown) shown.remove();
  const notice = mergeNotice();
  if (notice) errorBox.before(notice);
  try {
    if (path.startsWith("/product/")) await product(path.slice("/product/".length));
    else if (path === "/search") await search(params);
    else if (path === "/account") account();
    else if (path === "/cart") await cart();
    else if (path === "/orders") await orders(params);
    else if (path.startsWith("/order/")) await order(decodeURIComponent(path.slice("/order/".length)));
    else await catalog(params);
  } catch (e) { showError(e); }
}

const searchBox = document.getElementById("search");
const suggestions = document.getElementById("suggestions");
searchBox.addEventListener("input", guarded(async () => {
  if (searchBox.value.trim().length < 2) return;
  const found = await api.suggest(searchBox.value);
  suggestions.replaceChildren(...found.completions.map((c) => h("option", { value: c })));
}));
document.getElementById("search-form").addEventListener("submit", (e) => {
  e.preventDefault();
  location.hash = `#/search?q=${encodeURIComponent(searchBox.value)}`;
});
document.getElementById("logout").addEventListener("click", guarded(async () => {
  try { await api.logout(); } finally { session.clear(); location.hash = "#/"; route(); }
}));
// The market switch: another market is another currency, so another cart.
const marketSelect = document.getElementById("market");
marketSelect.addEventListener("change", () => {
  useMarket(shop.markets.find((m) => m.id === marketSelect.value));
  sessionStorage.removeItem("cart");
  route();
});
window.addEventListener("hashchange", route);
loadMarkets().then(() => {
  marketSelect.replaceChildren(...shop.markets.map((m) =>
    h("option", m.id === shop.market.id ? { value: m.id, selected: "" } : { value: m.id }, `${text(m.name)} (${m.currencies[0].code})`)));
}).catch(showError).finally(route);

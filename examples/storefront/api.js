// The Storefront BFF as a browser calls it: every request sends
// X-Api-Version and a fresh Correlation-Id; customer calls send the access
// token as X-BFF-Token and, when it has expired, exchange the refresh token
// once and retry. Errors keep the API's error body and correlation id.

// The API this page talks to: the first origin config.js names, or one
// that ?api= picks among them (or the page's own origin). Any other ?api=
// is ignored: it would send the shopper's email and password to that host.
const API = (() => {
  const allowed = (window.STOREFRONT_APIS || []).map((u) => new URL(u).origin);
  allowed.push(location.origin);
  const asked = new URLSearchParams(location.search).get("api");
  if (asked) {
    let origin = null;
    try {
      origin = new URL(asked).origin;
    } catch (_) {
      origin = null;
    }
    if (allowed.includes(origin)) return origin;
    console.warn("?api= ignored: not one of this page's configured API origins");
  }
  return allowed[0];
})();
const VERSION = "v1.0";

class ApiError extends Error {
  constructor(status, body, correlationId) {
    super(body && body.message ? body.message : `HTTP ${status}`);
    this.status = status;
    this.body = body || {};
    this.correlationId = correlationId;
  }
  // Field errors by field name, for showing next to their inputs.
  get fields() {
    const out = {};
    for (const e of this.body.errors || []) out[e.field] = e.message;
    return out;
  }
}

// A customer's session, or a guest's (POST /auth/guest: carts and checkout
// only; a login with its token merges the guest's cart).
const session = {
  get access() { return sessionStorage.getItem("access"); },
  get refresh() { return sessionStorage.getItem("refresh"); },
  get guest() { return sessionStorage.getItem("guest") === "1"; },
  get customer() { return Boolean(this.access) && !this.guest; },
  save(result) {
    sessionStorage.setItem("access", result.accessToken);
    sessionStorage.setItem("refresh", result.refreshToken);
    // A login result names its customer; a guest's has none.
    sessionStorage.setItem("guest", result.customer ? "0" : "1");
  },
  clear() {
    for (const key of ["access", "refresh", "guest", "cart"]) sessionStorage.removeItem(key);
  },
};

async function call(method, path, body, token, cache = "default") {
  const headers = { "X-Api-Version": VERSION, "Correlation-Id": crypto.randomUUID() };
  if (token) headers["X-BFF-Token"] = token;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(API + path, {
    method,
    cache,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  const json = text ? JSON.parse(text) : null;
  if (!response.ok) {
    throw new ApiError(response.status, json, response.headers.get("Correlation-Id"));
  }
  return json;
}

// A call as the logged-in customer; an expired access token is refreshed
// once (the refresh token is single use: the new pair replaces it).
async function customerCall(method, path, body) {
  try {
    return await call(method, path, body, session.access);
  } catch (e) {
    if (!(e instanceof ApiError) || e.body.code !== "TOKEN_EXPIRED" || !session.refresh) throw e;
    const renewed = await call("POST", "/auth/token", {
      grantType: "refresh_token",
      refreshToken: session.refresh,
    });
    session.save(renewed);
    return call(method, path, body, session.access);
  }
}

const api = {
  tree: () => call("GET", "/categories/tree"),
  products: (query) => call("GET", `/products?${query}`),
  // Revalidated (its ETag: a 304 when unchanged), so the stock shown is now's.
  product: (id, currency) => call("GET", `/products/${encodeURIComponent(id)}?currency=${currency}`, undefined, undefined, "no-cache"),
  search: (query) => call("GET", `/search?${query}`),
  suggest: (text) => call("GET", `/search/suggestions?query=${encodeURIComponent(text)}&limit=6`),
  signUp: (body) => call("POST", "/customers", body),
  // With a guest's token, the login merges the guest's cart (mergeReport).
  login: (body) => call("POST", "/auth/login", body, session.guest ? session.access : undefined),
  guest: () => call("POST", "/auth/guest"),
  logout: () => call("POST", "/auth/logout", { refreshToken: session.refresh || "" }, session.access),
  markets: () => call("GET", "/markets"),
  newCart: (currencyCode) => customerCall("POST", "/carts", { currencyCode }),
  cart: (id) => customerCall("GET", `/carts/${id}`),
  addLine: (id, line) => customerCall("POST", `/carts/${id}/line-items`, line),
  setQuantity: (id, line, quantity) => customerCall("PUT", `/carts/${id}/line-items/${line}`, { quantity }),
  removeLine: (id, line) => customerCall("DELETE", `/carts/${id}/line-items/${line}`),
  applyCode: (id, code) => customerCall("PUT", `/carts/${id}`, { discountCode: code }),
  addAddress: (address) => customerCall("POST", "/customers/me/addresses", address),
  // `to`: { shippingAddressId } from the address book, or { shippingAddress }.
  checkout: (cartId, to) => customerCall("POST", "/checkout", { cartId, ...to }),
  // The session's payment, confirmed with `paymentMethod` (the test
  // provider's cards locally; a PaymentMethod from Stripe.js with Stripe).
  pay: (sessionId, paymentMethod) => customerCall("POST", `/checkout/${sessionId}/payment`, { paymentMethod }),
  // Another of the market's shipping methods: the session repriced.
  ship: (sessionId, shippingMethodId) => customerCall("PUT", `/checkout/${sessionId}`, { shippingMethodId }),
  confirm: (sessionId) => customerCall("POST", `/checkout/${sessionId}/confirm`),
  orders: () => customerCall("GET", "/orders?limit=20"),
  order: (id) => customerCall("GET", `/orders/${encodeURIComponent(id)}`),
};

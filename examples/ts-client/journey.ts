// A storefront journey typed by the client generated from openapi.json
// (openapi-typescript): if the document and this script disagree on a path,
// a parameter, a body or a field, `tsc` fails. scripts/client-check runs it.

import type { components, paths } from "./schema";

type Schemas = components["schemas"];
type Json<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends {
  responses: { 200: { content: { "application/json": infer B } } };
}
  ? B
  : paths[P][M] extends { responses: { 201: { content: { "application/json": infer B } } } }
    ? B
    : never;
type Body<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends {
  requestBody?: { content: { "application/json": infer B } };
}
  ? B
  : never;

const base = "http://127.0.0.1:8080";

async function call<T>(method: string, path: string, token?: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { "X-Api-Version": "v1.0", "Correlation-Id": crypto.randomUUID() };
  if (token) headers["X-BFF-Token"] = token;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const json = await res.json();
  if (!res.ok) {
    const error = json as Schemas["ErrorBody"];
    throw new Error(`${error.code}: ${error.message} (${error.errors?.map((e) => e.field).join(", ")})`);
  }
  return json as T;
}

export async function journey(email: string): Promise<string> {
  const tree = await call<Json<"/categories/tree", "get">>("GET", "/categories/tree");
  const category = tree.roots[0].children[0].id;
  const page = await call<Json<"/products", "get">>("GET", `/products?category=${category}&inStock=true&limit=5`);
  const product: Schemas["Product"] = page.results[0];
  const price: number = product.price.centAmount;

  const signUp: Body<"/customers", "post"> = {
    emailAddress: email, password: "correct horse 42", firstName: "Tia", lastName: "Typed", gRecaptchaResponse: "dev",
  };
  await call("POST", "/customers", undefined, signUp);
  const login: Body<"/auth/login", "post"> = { emailAddress: email, password: signUp.password, gRecaptchaResponse: "dev" };
  const session = await call<Json<"/auth/login", "post">>("POST", "/auth/login", undefined, login);
  const token: string = session.accessToken;

  const cart = await call<Json<"/carts", "post">>("POST", "/carts", token);
  const line: Body<"/carts/{cartId}/line-items", "post"> = { productId: product.id, variantId: product.masterVariant.id, quantity: 1 };
  const filled = await call<Json<"/carts/{cartId}/line-items", "post">>("POST", `/carts/${cart.id}/line-items`, token, line);
  const subtotal: number = filled.subtotal.centAmount;

  const address: Body<"/customers/{customerId}/addresses", "post"> = {
    firstName: "Tia", lastName: "Typed", streetName: "1 George St", city: "Sydney", postalCode: "2000", country: "AU",
  };
  const saved = await call<Json<"/customers/{customerId}/addresses", "post">>("POST", "/customers/me/addresses", token, address);
  const open: Body<"/checkout", "post"> = { cartId: cart.id, shippingAddressId: saved.id };
  const checkout = await call<Json<"/checkout", "post">>("POST", "/checkout", token, open);
  // The test provider's card that authorizes (Stripe's test method id).
  const method: Body<"/checkout/{sessionId}/payment", "post"> = { paymentMethod: "pm_card_visa" };
  const payment = await call<Json<"/checkout/{sessionId}/payment", "post">>("POST", `/checkout/${checkout.id}/payment`, token, method);
  if (payment.status !== "authorized") throw new Error(`payment ${payment.status}`);
  const confirmed = await call<Json<"/checkout/{sessionId}/confirm", "post">>("POST", `/checkout/${checkout.id}/confirm`, token);
  const orders = await call<Json<"/orders", "get">>("GET", "/orders", token);
  const total: number = orders.results[0].totals.total.centAmount;
  console.log({ price, subtotal, total });
  return confirmed.orderId ?? "";
}

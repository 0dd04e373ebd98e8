// Where the shopper shops: a market of GET /markets (kept in
// localStorage), its locale and currency; labels in the locale's
// language, money and dates formatted for the locale.

const LABELS = {
  en: {
    firstName: "First name", lastName: "Last name", streetName: "Street", streetNumber: "Number",
    city: "City", postalCode: "Postcode", state: "State or region", country: "Country",
    emailAddress: "Email", password: "Password", addToCart: "Add to cart", cart: "Cart",
    checkout: "Check out", shipTo: "Ship to", subtotal: "Subtotal", discount: "Discount",
    shipping: "Shipping", tax: "Tax", total: "Total", left: "left", pay: "Pay and place order",
    card: "Card", orders: "Your orders", order: "Order", status: "Status", placed: "Order placed",
    remove: "Remove", quantity: "Quantity", apply: "Apply", discountCode: "Discount code",
    empty: "Your cart is empty.", heldUntil: "Your items are held for you until", days: "days",
    logIn: "Log in", signUp: "Sign up", payment: "Payment", date: "Date", thankYou: "Thank you",
    resultsFor: "results for", filter: "Filter", inStock: "In stock", brand: "Brand",
    previous: "Previous", next: "Next", of: "of", update: "Update", included: "included",
    variant: "Variant", back: "Back to your orders",
  },
  de: {
    firstName: "Vorname", lastName: "Nachname", streetName: "Straße", streetNumber: "Hausnummer",
    city: "Ort", postalCode: "Postleitzahl", state: "Bundesland", country: "Land",
    emailAddress: "E-Mail", password: "Passwort", addToCart: "In den Warenkorb", cart: "Warenkorb",
    checkout: "Zur Kasse", shipTo: "Lieferadresse", subtotal: "Zwischensumme", discount: "Rabatt",
    shipping: "Versand", tax: "MwSt.", total: "Gesamt", left: "verfügbar", pay: "Bezahlen und bestellen",
    card: "Karte", orders: "Ihre Bestellungen", order: "Bestellung", status: "Status",
    placed: "Bestellung aufgegeben", remove: "Entfernen", quantity: "Menge", apply: "Einlösen",
    discountCode: "Gutscheincode", empty: "Ihr Warenkorb ist leer.",
    heldUntil: "Ihre Artikel sind reserviert bis", days: "Tage", logIn: "Anmelden", signUp: "Registrieren",
    payment: "Zahlung", date: "Datum", thankYou: "Vielen Dank", resultsFor: "Ergebnisse für",
    filter: "Filtern", inStock: "Auf Lager", brand: "Marke", previous: "Zurück", next: "Weiter",
    of: "von", update: "Ändern", included: "enthalten", variant: "Variante",
    back: "Zurück zu Ihren Bestellungen",
  },
};

const shop = { markets: [], market: null, locale: "en-AU", currency: "AUD" };

// The markets, and the one chosen before (or the first).
async function loadMarkets() {
  shop.markets = (await api.markets()).markets;
  const chosen = shop.markets.find((m) => m.id === localStorage.getItem("market")) || shop.markets[0];
  useMarket(chosen);
}

function useMarket(market) {
  shop.market = market;
  shop.locale = market.locales[0];
  shop.currency = market.currencies[0].code;
  localStorage.setItem("market", market.id);
  document.documentElement.lang = shop.locale;
}

const t = (key) => {
  const words = LABELS[shop.locale.split("-")[0]] || LABELS.en;
  return words[key] || LABELS.en[key] || key;
};
const text = (localized) =>
  (localized && (localized[shop.locale] || localized[`${shop.locale.split("-")[0]}`] || Object.values(localized)[0])) || "";
const money = (m) =>
  m ? new Intl.NumberFormat(shop.locale, { style: "currency", currency: m.currencyCode })
    .format(m.centAmount / 10 ** m.fractionDigits) : "";
const when = (iso) =>
  iso ? new Intl.DateTimeFormat(shop.locale, { dateStyle: "medium", timeStyle: "short" }).format(new Date(iso)) : "";
const percent = (rate) => new Intl.NumberFormat(shop.locale, { style: "percent", maximumFractionDigits: 2 }).format(rate);

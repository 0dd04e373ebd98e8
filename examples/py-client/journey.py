"""A storefront journey through a Python client generated from openapi.json
(openapi-python-client): sign-up, login, address, search, cart, checkout,
confirm, orders, and the content a storefront renders. Run by
scripts/contract-test against the mesh it starts:

    python journey.py http://127.0.0.1:PORT

Every step checks what the document promises: the status and the typed
model the client parsed (a model the generator dropped would come back as
None and fail here).
"""

import sys
import uuid

from storefront_client import AuthenticatedClient, Client
from storefront_client.api.authentication import login
from storefront_client.api.cart import (
    add_line_item,
    confirm_checkout,
    create_cart,
    create_checkout,
    pay_checkout,
)
from storefront_client.api.content import footer, page
from storefront_client.api.customers import create_address, get_customer, sign_up
from storefront_client.api.orders import list_orders
from storefront_client.api.products import list_variants
from storefront_client.api.search import search
from storefront_client.models import (
    Address,
    AddressBody,
    AddLineItemBody,
    Cart,
    CheckoutBody,
    CheckoutSession,
    CreateCartBody,
    CustomerProfile,
    Document,
    LoginBody,
    LoginResult,
    Payment,
    PaymentBody,
    PagedVariant,
    SearchResult,
    SignUpAccepted,
    SignUpBody,
)

VERSION = "v1.0"
CAPTCHA = "dev-ok"


def expect(response, status, model):
    """The parsed body of `response`, which must be `status` and a `model`."""
    assert response.status_code == status, (response.status_code, response.content[:300])
    assert isinstance(response.parsed, model), (type(response.parsed), response.content[:300])
    return response.parsed


def main(base_url):
    public = Client(base_url=base_url)

    # A new shopper signs up: the same answer for a new and a known address.
    email = f"py-{uuid.uuid4().hex[:12]}@example.com"
    body = SignUpBody(
        email_address=email,
        first_name="Pia",
        last_name="Python",
        password="a-long-enough-password-1",
        g_recaptcha_response=CAPTCHA,
    )
    expect(sign_up.sync_detailed(client=public, body=body, x_api_version=VERSION), 202, SignUpAccepted)

    # The new customer logs in and shops (its own address book and carts:
    # nothing another test left behind is in the way).
    credentials = LoginBody(
        email_address=email,
        password=body.password,
        g_recaptcha_response=CAPTCHA,
    )
    session = expect(
        login.sync_detailed(client=public, body=credentials, x_api_version=VERSION), 200, LoginResult
    )
    shopper = AuthenticatedClient(
        base_url=base_url, token=session.access_token, prefix="", auth_header_name="X-BFF-Token"
    )
    me = expect(
        get_customer.sync_detailed("me", client=shopper, x_api_version=VERSION), 200, CustomerProfile
    )
    address = AddressBody(
        first_name="Pia",
        last_name="Python",
        street_name="Python Street",
        city="Melbourne",
        postal_code="3000",
        country="AU",
    )
    address = expect(
        create_address.sync_detailed(me.id, client=shopper, body=address, x_api_version=VERSION),
        201,
        Address,
    )

    found = expect(
        search.sync_detailed(client=public, query="mug", in_stock=True, x_api_version=VERSION),
        200,
        SearchResult,
    )
    assert found.results, "search finds in-stock mugs"
    product = found.results[0]

    cart = expect(
        create_cart.sync_detailed(
            client=shopper, body=CreateCartBody(currency_code="AUD"), x_api_version=VERSION
        ),
        201,
        Cart,
    )
    variants = expect(
        list_variants.sync_detailed(product.id, client=public, x_api_version=VERSION),
        200,
        PagedVariant,
    )
    variant = next(v for v in variants.results if v.availability.quantity > 0)
    line = AddLineItemBody(product_id=product.id, variant_id=variant.id, quantity=1)
    cart = expect(
        add_line_item.sync_detailed(cart.id, client=shopper, body=line, x_api_version=VERSION),
        200,
        Cart,
    )
    assert len(cart.line_items) == 1, cart
    checkout = expect(
        create_checkout.sync_detailed(
            client=shopper,
            body=CheckoutBody(cart_id=cart.id, shipping_address_id=address.id),
            x_api_version=VERSION,
        ),
        201,
        CheckoutSession,
    )
    # The test provider's card that authorizes (Stripe's test method id).
    payment = expect(
        pay_checkout.sync_detailed(
            checkout.id,
            client=shopper,
            body=PaymentBody(payment_method="pm_card_visa"),
            x_api_version=VERSION,
        ),
        201,
        Payment,
    )
    assert payment.status == "authorized", payment
    confirmed = expect(
        confirm_checkout.sync_detailed(checkout.id, client=shopper, x_api_version=VERSION),
        200,
        CheckoutSession,
    )
    assert confirmed.order_id, confirmed
    orders = list_orders.sync_detailed(client=shopper, x_api_version=VERSION)
    assert orders.status_code == 200, orders.content[:300]
    assert any(o.id == confirmed.order_id for o in orders.parsed.results), "the order is listed"

    # The content a storefront renders: every section typed.
    for response in (
        footer.sync_detailed(client=public, x_api_version=VERSION),
        page.sync_detailed("about", client=public, x_api_version=VERSION),
    ):
        document = expect(response, 200, Document)
        assert document.sections, "a document has sections"
        kinds = {type(section).__name__ for section in document.sections}
        assert kinds <= {"LinksSection", "TextSection", "ImageSection"}, kinds
    print(f"the Python client's journey passed: order {confirmed.order_id}")


if __name__ == "__main__":
    main(sys.argv[1])

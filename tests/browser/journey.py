"""The starter storefront in a real headless Chromium (WebDriver), served from
its own origin against the mesh: a shopper's whole journey passes (shopping
as a guest first, the guest's cart merged at sign-up, stock going down once
the order is placed, placeholder images where the demo's do not load), a
screenshot of the placed order is kept, and the same page served from an
origin the API does not allow fails at the CORS preflight, as a browser
would; the access token expires mid-journey and the page refreshes it. Run
by scripts/browser-test (which starts the mesh and the servers).

    python3 tests/browser/journey.py API_URL ALLOWED_SHOP_URL DISALLOWED_SHOP_URL SCREENSHOT
"""

import re
import sys
import time
import uuid

from selenium import webdriver
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import Select, WebDriverWait

API, SHOP, STRANGER, SCREENSHOT = sys.argv[1:5]


def browser():
    options = webdriver.ChromeOptions()
    for flag in (
        "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--window-size=1100,700",
    ):
        options.add_argument(flag)
    options.binary_location = "/usr/bin/chromium"
    return webdriver.Chrome(options=options, service=webdriver.ChromeService("/usr/bin/chromedriver"))


def main():
    driver = browser()
    # Views re-render after each answer: an element found a moment ago may be gone.
    wait = WebDriverWait(driver, 20, ignored_exceptions=[StaleElementReferenceException])
    seen = lambda css: wait.until(ec.visibility_of_element_located((By.CSS_SELECTOR, css)))
    present = lambda css: wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, css)))

    def click(css):
        """Finds and clicks in one step, again if a re-render replaced the element."""
        def attempt(d):
            try:
                d.find_element(By.CSS_SELECTOR, css).click()
                return True
            except (NoSuchElementException, StaleElementReferenceException):
                return False
        wait.until(attempt)

    try:
        # Browse a category, page through it, filter it.
        # ?api= naming a host the page is not configured for is ignored:
        # the page keeps to its configured API (a shopper's password must
        # never go to a host a link chose).
        driver.get(f"{SHOP}/?api=http://127.0.0.1:1#/")
        present("#results .card")
        assert driver.execute_script("return API") == API, driver.execute_script("return API")
        driver.get(f"{SHOP}/?api={API}#/")
        present("#results .card")
        # Money and labels as the market says: Australia (en-AU, AUD) first,
        # then Germany (de-DE, EUR), then back.
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#market option"))
        assert "$" in present("#results .card .price").text, present("#results .card .price").text
        Select(seen("#market")).select_by_value("de")
        wait.until(lambda d: "€" in d.find_element(By.CSS_SELECTOR, "#results .card .price").text)
        assert seen(".filters button").text == "Filtern"
        Select(seen("#market")).select_by_value("au")
        wait.until(lambda d: "$" in d.find_element(By.CSS_SELECTOR, "#results .card .price").text)
        first = driver.find_element(By.CSS_SELECTOR, "#results .card a").text
        click("#next-page")
        wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "#results .card a").text != first)
        assert "offset=12" in driver.current_url, driver.current_url
        driver.find_element(By.CSS_SELECTOR, ".filters input[type=checkbox]").click()
        driver.find_element(By.CSS_SELECTOR, ".filters button").click()
        wait.until(lambda d: "inStock=true" in d.current_url)
        present("#results .card")

        # Search with suggestions.
        box = seen("#search")
        box.send_keys("shi")
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#suggestions option"))
        box.send_keys("rt")
        driver.find_element(By.CSS_SELECTOR, "#search-form button").click()
        seen("#results .card")
        assert "results for" in driver.find_element(By.TAG_NAME, "h2").text

        # As a guest (no account yet): a product, what is left of it, its
        # pictures (drawn by the mesh for the demo catalog), the cart.
        # (The second product: the customer buys the first one later.)
        driver.get(f"{SHOP}/?api={API}#/?inStock=true")
        click("#results .card:nth-child(2) a")
        seen("#add-to-cart")
        product_url = driver.current_url
        variant = present("select[name=variantId] option[selected]").get_attribute("value")
        option = f"select[name=variantId] option[value='{variant}']"
        left = lambda: int(re.search(r"\((\d+) left\)", present(option).text).group(1))
        left_before = left()
        wait.until(lambda d: d.execute_script(
            "const i = [...document.querySelectorAll('.media img')];"
            "return i.length > 0 && i.every(x => x.complete && x.naturalWidth > 0);"))
        # The demo's pictures come from the mesh itself (never a placeholder).
        sources = driver.execute_script("return [...document.querySelectorAll('.media img')].map(x => x.src)")
        assert all(src.startswith(f"{API}/media/demo/") for src in sources), sources
        driver.find_element(By.ID, "add-to-cart").click()
        seen("#lines tr")
        assert not driver.find_element(By.ID, "account-link").get_attribute("hidden"), "still a guest"

        # Sign up (the dev captcha): the guest's cart is merged at the login.
        driver.get(f"{SHOP}/?api={API}#/account")
        email = f"browser-{uuid.uuid4().hex[:12]}@example.com"
        form = seen("#sign-up")
        for name, value in (("emailAddress", email), ("password", "correct horse 42"),
                            ("firstName", "Bea"), ("lastName", "Browser")):
            form.find_element(By.NAME, name).send_keys(value)
        form.find_element(By.TAG_NAME, "button").click()
        wait.until(lambda d: not d.find_element(By.ID, "logout").get_attribute("hidden"))
        report = seen("#merge-report").text
        assert "1 added" in report, report
        driver.get(f"{SHOP}/?api={API}#/?inStock=true")
        click("#results .card a")
        seen("#add-to-cart")
        assert driver.find_elements(By.CSS_SELECTOR, ".media img"), "product media shown"
        assert driver.find_elements(By.CSS_SELECTOR, "select[name=variantId] option"), "variants listed"
        driver.find_element(By.ID, "add-to-cart").click()

        # Cart: a bad code shows its field error, a good one discounts.
        seen("#lines tr")
        code = seen("#discount input")
        code.send_keys("NOPE")
        driver.find_element(By.CSS_SELECTOR, "#discount button").click()
        error = seen(".field-error[data-field=discountCode]")
        assert "not a valid discount code" in error.text, error.text
        assert "Correlation-Id" in seen("#error").text
        code = seen("#discount input")
        code.clear()
        code.send_keys("WELCOME10")
        driver.find_element(By.CSS_SELECTOR, "#discount button").click()
        wait.until(lambda d: d.find_element(By.ID, "cart-total").get_attribute("data-discount") not in ("0", None))

        # A line's quantity changed in place: the cart's total follows.
        total = seen("#cart-total").text
        quantity = driver.find_elements(By.CSS_SELECTOR, "#lines input[type=number]")[-1]
        quantity.clear()
        quantity.send_keys("2")
        quantity.send_keys(Keys.TAB)
        wait.until(lambda d: d.find_element(By.ID, "cart-total").text != total)

        # Let the access token expire (the mesh issues 30 s tokens here, and
        # the gateway allows 5 s of clock skew): checking out must refresh it.
        time.sleep(37)

        # Check out to an address, confirm, see the order in the history.
        form = seen("#checkout")
        for name, value in (("firstName", "Bea"), ("lastName", "Browser"), ("streetName", "1 George St"),
                            ("city", "Sydney"), ("postalCode", "2000")):
            form.find_element(By.NAME, name).send_keys(value)
        form.find_element(By.TAG_NAME, "button").click()
        # The market's shipping methods and its tax: another method reprices.
        assert "GST" in seen("#tax-lines").text, seen("#tax-lines").text
        total = seen("#totals .grand-total").text
        click("#shipping input[value=express]")
        wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "#totals .grand-total").text != total)
        # Pay with the test provider's declined card: 402, shown, nothing placed;
        # then with the card that authorizes.
        Select(seen("#card")).select_by_value("pm_card_visa_chargeDeclined")
        click("#confirm")
        wait.until(lambda d: "PAYMENT_DECLINED" in d.find_element(By.ID, "error").text)
        Select(seen("#card")).select_by_value("pm_card_visa")
        click("#confirm")
        placed = seen("#placed").text.split(": ")[1]
        present(f"#orders tr[data-order='{placed}']")
        driver.save_screenshot(SCREENSHOT)
        # The order's own page: its lines, tax, shipping and payment.
        click(f"#orders tr[data-order='{placed}'] a")
        page = seen("#order").text
        for expected in ("GST", "Express", "authorized"):
            assert expected in page, (expected, page)
        driver.save_screenshot(SCREENSHOT.replace("order-placed", "order"))

        # The units bought are gone from what everyone is shown.
        driver.get(product_url)
        seen("#add-to-cart")
        assert left() < left_before, (left(), left_before)
        driver.save_screenshot(SCREENSHOT.replace("order-placed", "product"))

        # Log out: the account link is back.
        driver.find_element(By.ID, "logout").click()
        wait.until(lambda d: not d.find_element(By.ID, "account-link").get_attribute("hidden"))

        # From an origin the API does not allow, the browser blocks the call.
        driver.get(f"{STRANGER}/?api={API}#/")
        message = seen("#error").text
        assert "Failed to fetch" in message, message
        assert not driver.find_elements(By.CSS_SELECTOR, "#results .card")
    finally:
        driver.quit()
    print("browser journey passed; screenshot:", SCREENSHOT)


if __name__ == "__main__":
    main()

"""The API reference in a real headless Chromium: the API's root leads to
/docs, Redoc (served by the gateway itself) renders the document with its
groups and an operation's examples, nothing is blocked by the page's
policy or fetched from another origin; the internal port's page renders
its own document once given a caller's identity token (and refuses a bad
one). Run by scripts/browser-test.

    python3 tests/browser/reference.py API_URL INTERNAL_URL INTERNAL_TOKEN SCREENSHOT
"""

import sys

from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

API, INTERNAL, TOKEN, SCREENSHOT = sys.argv[1:5]


def browser():
    options = webdriver.ChromeOptions()
    for flag in (
        "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--window-size=1280,900",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    options.binary_location = "/usr/bin/chromium"
    return webdriver.Chrome(options=options, service=webdriver.ChromeService("/usr/bin/chromedriver"))


def rendered(driver, text):
    WebDriverWait(driver, 30).until(ec.presence_of_element_located((By.CSS_SELECTOR, "h1")))
    WebDriverWait(driver, 30).until(lambda d: text in d.find_element(By.TAG_NAME, "body").text)


def requested_origins(driver):
    import json

    origins = set()
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent":
            url = message["params"]["request"]["url"]
            if url.startswith("http"):
                origins.add("/".join(url.split("/")[:3]))
    return origins


def main():
    driver = browser()
    try:
        driver.get(API + "/")
        assert driver.current_url.rstrip("/").endswith("/docs"), driver.current_url
        rendered(driver, "Storefront BFF")
        body = driver.find_element(By.TAG_NAME, "body").text
        for group in ("Products", "Cart", "Orders", "Payments"):
            assert group in body, f"the group {group} is not in the menu"
        driver.save_screenshot(SCREENSHOT)
        problems = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        assert not problems, problems
        origins = requested_origins(driver)
        assert origins == {API}, f"the page fetched from {origins}"
        driver.get(INTERNAL + "/docs")
        field = WebDriverWait(driver, 30).until(ec.presence_of_element_located((By.ID, "token")))
        field.send_keys("not a token")
        driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        WebDriverWait(driver, 30).until(lambda d: "401" in d.find_element(By.ID, "status").text)
        field.clear()
        field.send_keys(TOKEN)
        driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        rendered(driver, "Order events after a position")
        print(f"the reference renders at {API}/docs and {INTERNAL}/docs; screenshot: {SCREENSHOT}")
    finally:
        driver.quit()


if __name__ == "__main__":
    main()

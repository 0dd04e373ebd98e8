#!/usr/bin/env python3
"""A back office reading the shop's order events from the internal port.

Each event is a CloudEvent 1.0 in JSON whose data is the order as the
public API shows it, so no proto file is needed: this reads them with the
CloudEvents SDK (PyPI `cloudevents`), prints one line per event, and
keeps its place with each event's `sequence`.

    STOREFRONT_INTERNAL=http://127.0.0.1:8081 \\
    STOREFRONT_TOKEN=$(storefront token fulfilment@storefront.iam.gserviceaccount.com) \\
    python3 consumer.py [--after SEQUENCE] [--pages N]
"""

import argparse
import json
import os
import urllib.parse
import urllib.request

from cloudevents.core.formats.json import JSONFormat


def page(base, token, after, limit=100):
    query = {"limit": str(limit)}
    if after:
        query["after"] = after
    url = f"{base}/internal/events?{urllib.parse.urlencode(query)}"
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=10) as reply:
        return json.load(reply)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--after", default="", help="the sequence of the last event read")
    parser.add_argument("--pages", type=int, default=10, help="pages of 100 to read at most")
    args = parser.parse_args()
    base = os.environ.get("STOREFRONT_INTERNAL", "http://127.0.0.1:8081").rstrip("/")
    token = os.environ["STOREFRONT_TOKEN"]
    seen, after = set(), args.after
    for _ in range(args.pages):
        raw = page(base, token, after)
        if not raw:
            break
        for item in raw:
            event = JSONFormat().read(None, json.dumps(item))
            after = event.get_extension("sequence")
            if event.get_id() in seen:  # delivery is at least once
                continue
            seen.add(event.get_id())
            order = event.get_data()
            total = order["totals"]["total"]
            print(
                event.get_type(),
                event.get_subject(),
                order["status"],
                f'{total["centAmount"] / 10 ** total["fractionDigits"]:.2f} {total["currencyCode"]}',
            )
    print("next after", after or "(none)")


if __name__ == "__main__":
    main()

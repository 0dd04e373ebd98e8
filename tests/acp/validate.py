#!/usr/bin/env python3
"""Validates what the facade wrote against the protocol's own JSON schemas.

    validate.py                     answers on standard input: a JSON list of
                                    {"def": "<a $defs name>", "name": "...", "value": {...}},
                                    checked against schema.agentic_checkout.json
    validate.py --feed FILE [N]     a product feed (ProductsResponse of schema.feed.json):
                                    the whole document parsed, its products checked (every
                                    Nth of them when N is given); prints how many it holds

Prints each failure and exits 1 on any.
"""
import json
import os
import sys

from jsonschema import Draft202012Validator

HERE = os.path.dirname(os.path.abspath(__file__))
# The checkout schema is the gateway's too (the MCP tools' input schemas).
SCHEMAS = {"schema.agentic_checkout.json": "../../gateway/assets/acp/schema.agentic_checkout.json"}


def validator(bundle_file, definition):
    with open(os.path.join(HERE, SCHEMAS.get(bundle_file, bundle_file)), encoding="utf-8") as f:
        bundle = json.load(f)
    schema = {"$schema": bundle["$schema"], "$defs": bundle["$defs"], "$ref": f"#/$defs/{definition}"}
    return Draft202012Validator(schema)


def answers():
    failures, checked = [], 0
    for answer in json.load(sys.stdin):
        for error in validator("schema.agentic_checkout.json", answer["def"]).iter_errors(answer["value"]):
            path = "/".join(str(p) for p in error.absolute_path)
            failures.append(f"{answer['name']} ({answer['def']}) at /{path}: {error.message[:300]}")
        checked += 1
    return failures, f"{checked} answers hold to the protocol's schema"


def feed(path, every):
    with open(path, encoding="utf-8") as f:
        document = json.load(f)
    products = document.get("products", [])
    sampled = {"products": products[::every]}
    failures = []
    for error in validator("schema.feed.json", "ProductsResponse").iter_errors(sampled):
        where = "/".join(str(p) for p in error.absolute_path)
        failures.append(f"{path} at /{where}: {error.message[:300]}")
    variants = sum(len(p["variants"]) for p in products)
    return failures, f"feed holds {len(products)} products, {variants} variants; {len(sampled['products'])} checked"


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "--feed":
        every = int(sys.argv[3]) if len(sys.argv) > 3 else 1
        failures, held = feed(sys.argv[2], every)
    else:
        failures, held = answers()
    for failure in failures:
        print(failure)
    if failures:
        sys.exit(1)
    print(held)


main()

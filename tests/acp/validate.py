#!/usr/bin/env python3
"""Validates the facade's answers against the protocol's own JSON schema.

Reads a JSON list of {"def": "<a $defs name>", "name": "...", "value": {...}}
on standard input; prints each failure and exits 1 on any, else prints how
many answers held.
"""
import json
import os
import sys

from jsonschema import Draft202012Validator

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    with open(os.path.join(HERE, "schema.agentic_checkout.json"), encoding="utf-8") as f:
        bundle = json.load(f)
    answers = json.load(sys.stdin)
    failures = []
    for answer in answers:
        schema = {
            "$schema": bundle["$schema"],
            "$defs": bundle["$defs"],
            "$ref": f"#/$defs/{answer['def']}",
        }
        validator = Draft202012Validator(schema)
        for error in validator.iter_errors(answer["value"]):
            path = "/".join(str(p) for p in error.absolute_path)
            failures.append(f"{answer['name']} ({answer['def']}) at /{path}: {error.message[:300]}")
    for failure in failures:
        print(failure)
    if failures:
        sys.exit(1)
    print(f"{len(answers)} answers hold to the protocol's schema")


main()

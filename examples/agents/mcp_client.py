#!/usr/bin/env python3
"""An assistant's side of the shop's MCP server (docs/agents.md), with the
official MCP Python SDK: connect over Streamable HTTP with the agent's key,
list the tools, search, create a checkout session to an address, choose the
dearest shipping option, complete it with a delegated payment token, and
print one JSON line per step. With --wrong-key, shows the refusal instead.

    STOREFRONT=http://127.0.0.1:8080 ACP_KEY=acp_demo_local_key python3 examples/agents/mcp_client.py
"""
import asyncio
import json
import os
import sys
import uuid

from mcp import ClientSession
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

VERSION = "2026-04-17"
ADDRESS = {"name": "Jo Buyer", "line_one": "1 Market St", "city": "San Francisco",
           "state": "CA", "country": "US", "postal_code": "94105"}


def say(step, **fields):
    print(json.dumps({"step": step, **fields}), flush=True)


def meta():
    return {"api_version": VERSION, "idempotency_key": str(uuid.uuid4())}


async def call(session, tool, arguments):
    result = await session.call_tool(tool, arguments)
    if getattr(result, "is_error", False) or getattr(result, "isError", False):
        raise SystemExit(f"{tool}: {result}")
    return result.structured_content if hasattr(result, "structured_content") else result.structuredContent


async def shop(url, key):
    headers = {"Authorization": f"Bearer {key}"}
    async with create_mcp_http_client(headers=headers) as http:
        async with streamable_http_client(url, http_client=http) as (read, write, *_):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = sorted(t.name for t in (await session.list_tools()).tools)
                say("tools", names=tools)
                found = await call(session, "search_products", {"query": "wallet", "currency": "USD", "limit": 5})
                item = next(r["item_id"] for r in found["results"] if r["in_stock"])
                say("search", total=found["total"], item=item)
                product = await call(session, "get_product", {"id": item.rsplit(":", 1)[0]})
                say("product", variants=len(product["variants"]))
                created = await call(session, "create_checkout_session", {"meta": meta(), "payload": {
                    "currency": "usd", "line_items": [{"id": item}],
                    "fulfillment_details": {"name": "Jo Buyer", "address": ADDRESS}}})
                say("created", id=created["id"], status=created["status"])
                option = created["fulfillment_options"][-1]["id"]
                updated = await call(session, "update_checkout_session", {"meta": meta(), "id": created["id"], "payload": {
                    "selected_fulfillment_options": [{"type": "shipping", "option_id": option, "item_ids": []}]}})
                say("updated", option=updated["selected_fulfillment_options"][0]["option_id"])
                completed = await call(session, "complete_checkout_session", {"meta": meta(), "id": created["id"], "payload": {
                    "buyer": {"email": "jo@example.com"},
                    "payment_data": {"handler_id": "card_tokenized",
                                     "instrument": {"type": "card", "credential": {"type": "spt", "token": "spt_test_visa"}}}}})
                say("completed", status=completed["status"], order=completed["order"]["id"])
                try:
                    await session.call_tool("get_checkout_session", {"meta": {"api_version": "1999-01-01"}, "id": created["id"]})
                except Exception as refused:  # the binding's JSON-RPC error, the protocol's in data
                    error = getattr(refused, "error", None)
                    data = getattr(error, "data", None) or {}
                    say("refused", rpc_code=getattr(error, "code", None), code=data.get("code"), type=data.get("type"))


async def refused(url):
    async with create_mcp_http_client(headers={"Authorization": "Bearer not-a-key"}) as http:
        try:
            async with streamable_http_client(url, http_client=http) as (read, write, *_):
                async with ClientSession(read, write) as session:
                    await session.initialize()
        except BaseException as e:  # noqa: BLE001 - any failure to connect is the point
            say("wrong-key", refused=True, error=type(e).__name__)
            return
    say("wrong-key", refused=False)


def main():
    base = os.environ.get("STOREFRONT", "http://127.0.0.1:8080")
    url = f"{base}/mcp"
    if "--wrong-key" in sys.argv:
        asyncio.run(refused(url))
    else:
        asyncio.run(shop(url, os.environ.get("ACP_KEY", "acp_demo_local_key")))


main()

"""schemathesis hooks for the Agentic Commerce Protocol run of
scripts/contract-test (the protocol's own OpenAPI document against the
facade): the document declares `Authorization` and `API-Version` as
parameters, so the generator fills them with its own values; just before
the call they become the demo agent's key and the version served (but in
the coverage phase's cases that leave a header out), and a generated
`Idempotency-Key` a fresh one (a reused key is the protocol's 422
idempotency_conflict: an answer about state no schema describes). A
generated `Signature` and `Timestamp` go: the demo agent need not sign, and
a signature the generator made up is rightly 401 (signing is tested end to
end, tests/e2e/acp.rs).
"""

import uuid

import schemathesis

KEY = "Bearer acp_demo_local_key"
VERSION = "2026-04-17"


def _left_out(case):
    data = getattr(getattr(getattr(case, "meta", None), "phase", None), "data", None)
    value = lambda name: str(getattr(getattr(data, name, None), "value", ""))
    if value("scenario") == "missing_parameter" and value("parameter_location") == "header":
        return value("parameter_name").lower()
    return None


@schemathesis.hook
def before_call(ctx, case, **kwargs):
    left_out = _left_out(case)
    headers = case.headers if case.headers is not None else {}
    for name, value in (("Authorization", KEY), ("API-Version", VERSION)):
        if left_out != name.lower():
            for given in [h for h in headers if h.lower() == name.lower()]:
                del headers[given]
            headers[name] = value
    for name in list(headers):
        if name.lower() == "idempotency-key" and left_out != "idempotency-key":
            headers[name] = str(uuid.uuid4())
        elif name.lower() in ("signature", "timestamp"):
            del headers[name]
    case.headers = headers

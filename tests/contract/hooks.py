"""schemathesis hooks for scripts/contract-test.

An Idempotency-Key the generator chose is replaced, just before the call,
by a fresh one: the generator reuses values across requests with other
bodies, and a reused key is, as the document says, 422
IDEMPOTENCY_KEY_REUSED (or 409 while the first runs): an answer about
state no schema can describe. Requests without the header stay without
it; the key's rules and its replays are tested end to end
(tests/e2e/idempotency.rs).

Not in the coverage phase's cases that leave out a required header: the
token and the version reach every request from the command line (-H), so
such a case is in fact whole; given a fresh key it would run (a cart
made, 201) where the check expects a refusal.
"""

import uuid

import schemathesis


def _leaves_out_a_header(case):
    data = getattr(getattr(getattr(case, "meta", None), "phase", None), "data", None)
    value = lambda name: str(getattr(getattr(data, name, None), "value", ""))
    return value("scenario") == "missing_parameter" and value("parameter_location") == "header"


@schemathesis.hook
def before_call(ctx, case, **kwargs):
    if _leaves_out_a_header(case):
        return
    headers = case.headers or {}
    for name in list(headers):
        if name.lower() == "idempotency-key":
            headers[name] = str(uuid.uuid4())

#!/usr/bin/env python3
"""A back office's webhook receiver for the shop's order events.

Each delivery is verified as Standard Webhooks specifies (PyPI
`standardwebhooks`: the `webhook-signature` over id, timestamp and body,
a timestamp within five minutes), read as a CloudEvent (PyPI
`cloudevents`), and handled once per `webhook-id` (deliveries repeat).
It prints one JSON line per event handled.

    WEBHOOK_SECRET=whsec_... python3 receiver.py --port 9000 [--fail-first]

`--fail-first` answers 503 to each event's first delivery, to watch the
shop retry it.
"""

import argparse
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from cloudevents.core.bindings.http import HTTPMessage, from_http_event
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

LOCK = threading.Lock()
HANDLED = set()
ATTEMPTED = set()


def handler(webhook, fail_first):
    class Receiver(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("content-length", 0)))
            headers = {k.lower(): v for k, v in self.headers.items()}
            try:
                webhook.verify(body, headers)
            except WebhookVerificationError as e:
                print(json.dumps({"rejected": str(e)}), flush=True)
                return self.answer(400)
            event = from_http_event(HTTPMessage(headers=headers, body=body))
            message_id = headers["webhook-id"]
            with LOCK:
                first = message_id not in ATTEMPTED
                ATTEMPTED.add(message_id)
                if fail_first and first:
                    return self.answer(503)
                if message_id in HANDLED:
                    return self.answer(204)
                HANDLED.add(message_id)
            order = event.get_data()
            line = {
                "id": event.get_id(),
                "type": event.get_type(),
                "subject": event.get_subject(),
                "status": order["status"],
                "retried": not first,
            }
            print(json.dumps(line), flush=True)
            self.answer(204)

        def answer(self, status):
            self.send_response(status)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    return Receiver


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=9000)
    parser.add_argument("--fail-first", action="store_true")
    args = parser.parse_args()
    webhook = Webhook(os.environ["WEBHOOK_SECRET"])
    server = ThreadingHTTPServer(("127.0.0.1", args.port), handler(webhook, args.fail_first))
    print(json.dumps({"listening": args.port}), flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()

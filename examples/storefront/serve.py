"""Serves the starter storefront from its own origin, as a shop would serve
it: every answer with a Content-Security-Policy (scripts, styles and
fetches from this origin and the API's only; no framing) and
X-Content-Type-Options: nosniff, and config.js naming the API origins the
page may call (?api= may pick one of them, never another host).

    python3 examples/storefront/serve.py --port 8000 --api http://127.0.0.1:8080
"""

import argparse
import functools
import http.server
import json
import os
from urllib.parse import urlsplit


def origin(url):
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise argparse.ArgumentTypeError(f"{url!r} is not an http(s) URL")
    return f"{parts.scheme}://{parts.netloc}"


def handler(apis):
    config = "window.STOREFRONT_APIS = %s;\n" % json.dumps(apis)
    policy = "; ".join([
        "default-src 'self'",
        "connect-src 'self' " + " ".join(apis),
        "img-src 'self' data: https: " + " ".join(apis),
        "frame-ancestors 'none'",
        "base-uri 'none'",
        "form-action 'self'",
    ])

    class Handler(http.server.SimpleHTTPRequestHandler):
        def end_headers(self):
            self.send_header("Content-Security-Policy", policy)
            self.send_header("X-Content-Type-Options", "nosniff")
            self.send_header("Referrer-Policy", "no-referrer")
            super().end_headers()

        def do_GET(self):
            if urlsplit(self.path).path == "/config.js":
                body = config.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/javascript; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(body)
                return
            super().do_GET()

        def log_message(self, *args):
            pass

    return Handler


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--bind", default="127.0.0.1")
    parser.add_argument("--api", type=origin, action="append",
                        help="an API origin the page may call (repeat for several; the first is the default)")
    args = parser.parse_args()
    apis = args.api or ["http://127.0.0.1:8080"]
    root = os.path.dirname(os.path.abspath(__file__))
    serve = functools.partial(handler(apis), directory=root)
    with http.server.ThreadingHTTPServer((args.bind, args.port), serve) as server:
        server.serve_forever()


if __name__ == "__main__":
    main()

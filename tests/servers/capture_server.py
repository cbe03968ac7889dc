#!/usr/bin/env python3
"""Two loopback origins (two ports) that record every request, for the browser tests
that a sign-in's tokens and our headers go nowhere they were not issued for.

On either port:
  POST <prefix>/auth/v1/signup and <prefix>/auth/v1/token?grant_type=...
      a Supabase Auth session for a new anonymous user, access token `access-<n>` and
      refresh token `refresh-<n>` (n random hex), expiring in 30 s (so that the
      client's next use refreshes it)
  POST <prefix>/auth/v1/logout    204
  GET  <prefix>/rest/v1/...       []        (anything else: {"id": 1}, a world user
                                            as `enter_world` answers)
  ANY  /redirect?to=URL           307 to URL (CORS headers included)
  GET  /seen                      every request recorded so far on either port:
                                  [{"port", "method", "path", "headers", "body"}]
Requests to /seen and CORS preflights are not recorded. CORS is open (a preflight is
allowed every header it asks for, Authorization included), so whatever a browser
would send after a redirect does arrive. Prints
`listening on PORT OTHER_PORT` once both are bound. Standard library only.
"""
import json
import secrets
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

LOCK = threading.Lock()
SEEN = []


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def log_message(self, *args):
        pass

    def cors(self):
        self.send_header("Access-Control-Allow-Origin", "*")
        # Every header asked for, by name: `*` would not cover Authorization.
        asked = self.headers.get("Access-Control-Request-Headers")
        self.send_header("Access-Control-Allow-Headers", asked or "*")
        self.send_header("Access-Control-Allow-Methods", "GET, POST, PATCH, DELETE, OPTIONS")

    def do_OPTIONS(self):
        self.send_response(204)
        self.cors()
        self.end_headers()

    def do_GET(self):
        self.answer()

    def do_POST(self):
        self.answer()

    def do_PATCH(self):
        self.answer()

    def do_DELETE(self):
        self.answer()

    def answer(self):
        url = urlparse(self.path)
        if url.path == "/seen":
            with LOCK:
                return self.reply(200, list(SEEN))
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode("utf-8", "replace") if length else ""
        with LOCK:
            SEEN.append({
                "port": self.server.server_address[1],
                "method": self.command,
                "path": self.path,
                "headers": {k.lower(): v for k, v in self.headers.items()},
                "body": body,
            })
        if url.path == "/redirect":
            self.send_response(307)
            self.cors()
            self.send_header("Location", parse_qs(url.query).get("to", ["/"])[0])
            self.send_header("Content-Length", "0")
            return self.end_headers()
        if url.path.endswith("/auth/v1/logout"):
            self.send_response(204)
            self.cors()
            return self.end_headers()
        if url.path.endswith("/auth/v1/signup") or url.path.endswith("/auth/v1/token"):
            n = secrets.token_hex(8)
            return self.reply(200, {
                "access_token": f"access-{n}", "token_type": "bearer", "expires_in": 30,
                "refresh_token": f"refresh-{n}",
                "user": {"id": f"user-{n}", "email": "", "is_anonymous": True},
            })
        if "/rest/v1/" in url.path and self.command == "GET":
            return self.reply(200, [])
        self.reply(200, {"id": 1})

    def reply(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.cors()
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def main():
    servers = [ThreadingHTTPServer(("127.0.0.1", 0), Handler) for _ in range(2)]
    for server in servers:
        server.daemon_threads = True
    print("listening on " + " ".join(str(s.server_address[1]) for s in servers), flush=True)
    threading.Thread(target=servers[1].serve_forever, daemon=True).start()
    servers[0].serve_forever()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A real OTLP/HTTP trace receiver for the tests, on loopback.

It decodes with the OpenTelemetry project's own message definitions (PyPI's
`opentelemetry-proto`, installed by `scripts/setup.sh test` into $OTLP_VENV) and
protobuf's strict JSON parser: an unknown field, a wrong type or a malformed id is a
400 carrying the parser's message, never a silent pass.

OTLP's JSON differs from protobuf's canonical JSON mapping in one place: trace and span
ids are lowercase hex, not base64 (opentelemetry-proto's docs, "JSON Protobuf
Encoding"). The receiver checks each id is hex of the right length, turns it into what
the parser reads, and turns it back to hex when it answers.

    otlp_receiver.py serve [--port N] [--down]
        POST /v1/traces     application/json or application/x-protobuf: 200 `{}` and
                            the spans kept; 400 with the parser's message; 503 while down
        GET  /spans         every span received, as JSON (decoded, then re-emitted
                            with MessageToDict), each with its resource and scope
        GET  /requests      how many exports arrived, accepted or refused
        POST /down, /up     answer 503 to exports (a collector that is down), or not
        POST /reset         forget what was received
      Prints `listening on PORT` once it listens (PORT chosen when --port is 0).
    otlp_receiver.py check FILE
        Decodes FILE (an ExportTraceServiceRequest in OTLP JSON) strictly; prints its
        spans as JSON and exits 0, or prints the parser's message and exits 1.
    otlp_receiver.py selftest FILE
        Starts the receiver on a free loopback port and exports FILE to it over HTTP as
        a client would: accepted and every span kept, a broken body refused with 400,
        a 503 while down and nothing kept, accepted again once up. Exits 1 on any
        difference.
"""

import argparse
import base64
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
)

# Id fields and their length in bytes.
ID_BYTES = {"traceId": 16, "spanId": 8, "parentSpanId": 8}


class Invalid(Exception):
    """What the receiver refuses, in the parser's (or our id check's) words."""


def hex_ids_to_base64(node, path="$"):
    """Every OTLP hex id in `node` as the protobuf parser reads bytes, checked."""
    if isinstance(node, list):
        return [hex_ids_to_base64(item, f"{path}[{i}]") for i, item in enumerate(node)]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key in ID_BYTES and isinstance(value, str):
            if value == "" and key == "parentSpanId":
                out[key] = ""
                continue
            want = ID_BYTES[key]
            if len(value) != 2 * want or value != value.lower():
                raise Invalid(f"{path}.{key}: {value!r} is not {want} bytes of lowercase hex")
            try:
                raw = bytes.fromhex(value)
            except ValueError as e:
                raise Invalid(f"{path}.{key}: {value!r} is not hex ({e})") from e
            out[key] = base64.b64encode(raw).decode()
        else:
            out[key] = hex_ids_to_base64(value, f"{path}.{key}")
    return out


def base64_ids_to_hex(node):
    """The reverse, for answers: ids back to OTLP's lowercase hex."""
    if isinstance(node, list):
        return [base64_ids_to_hex(item) for item in node]
    if not isinstance(node, dict):
        return node
    return {
        key: base64.b64decode(value).hex()
        if key in ID_BYTES and isinstance(value, str)
        else base64_ids_to_hex(value)
        for key, value in node.items()
    }


def decode_json(body):
    """An ExportTraceServiceRequest from OTLP JSON bytes, strictly, or Invalid."""
    try:
        document = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise Invalid(f"not JSON: {e}") from e
    request = ExportTraceServiceRequest()
    try:
        json_format.Parse(json.dumps(hex_ids_to_base64(document)), request)
    except json_format.ParseError as e:
        raise Invalid(str(e)) from e
    return request


def decode_protobuf(body):
    request = ExportTraceServiceRequest()
    try:
        request.ParseFromString(body)
    except Exception as e:  # protobuf's DecodeError, whatever its module
        raise Invalid(f"not an ExportTraceServiceRequest: {e}") from e
    return request


def spans_of(request):
    """Each span of a request as JSON, with its resource's attributes and its scope."""
    out = []
    for resource_spans in request.resource_spans:
        resource = json_format.MessageToDict(resource_spans.resource)
        for scope_spans in resource_spans.scope_spans:
            scope = json_format.MessageToDict(scope_spans.scope)
            for span in scope_spans.spans:
                entry = base64_ids_to_hex(json_format.MessageToDict(span))
                entry["resource"] = resource
                entry["scope"] = scope
                out.append(entry)
    return out


class State:
    def __init__(self, down):
        self.lock = threading.Lock()
        self.down = down
        self.spans = []
        self.accepted = 0
        self.refused = 0
        self.unavailable = 0


def handler_for(state):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # quiet: the tests read /spans, not the log
            pass

        def answer(self, status, document):
            body = json.dumps(document).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            # A page on another loopback port exports here (fetch with CORS).
            self.send_header("Access-Control-Allow-Origin", "*")
            self.end_headers()
            self.wfile.write(body)

        def do_OPTIONS(self):
            self.send_response(204)
            self.send_header("Access-Control-Allow-Origin", "*")
            self.send_header("Access-Control-Allow-Methods", "POST, GET")
            self.send_header("Access-Control-Allow-Headers", "*")
            self.end_headers()

        def do_GET(self):
            with state.lock:
                if self.path == "/spans":
                    return self.answer(200, state.spans)
                if self.path == "/requests":
                    return self.answer(200, {"accepted": state.accepted,
                                             "refused": state.refused,
                                             "unavailable": state.unavailable,
                                             "down": state.down})
            self.answer(404, {"error": f"no {self.path}"})

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length)
            switch = {"/down": True, "/up": False}
            if self.path in switch:
                with state.lock:
                    state.down = switch[self.path]
                return self.answer(200, {"down": state.down})
            if self.path == "/reset":
                with state.lock:
                    state.spans.clear()
                    state.accepted = state.refused = state.unavailable = 0
                return self.answer(200, {})
            if self.path != "/v1/traces":
                return self.answer(404, {"error": f"no {self.path}"})
            with state.lock:
                if state.down:
                    state.unavailable += 1
                    return self.answer(503, {"error": "the collector is down (test switch)"})
            kind = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
            try:
                if kind == "application/json":
                    request = decode_json(body)
                elif kind == "application/x-protobuf":
                    request = decode_protobuf(body)
                else:
                    raise Invalid(f"unsupported Content-Type {kind!r}")
                spans = spans_of(request)
            except Invalid as e:
                with state.lock:
                    state.refused += 1
                return self.answer(400, {"error": str(e)})
            with state.lock:
                state.accepted += 1
                state.spans.extend(spans)
            # ExportTraceServiceResponse with nothing rejected.
            self.answer(200, {})

    return Handler


def serve(port, down):
    state = State(down)
    server = ThreadingHTTPServer(("127.0.0.1", port), handler_for(state))
    print(f"listening on {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


def check(path):
    with open(path, "rb") as f:
        body = f.read()
    try:
        spans = spans_of(decode_json(body))
    except Invalid as e:
        print(f"{path}: {e}", file=sys.stderr)
        return 1
    print(json.dumps(spans, indent=1))
    return 0


def selftest(path):
    import urllib.error
    import urllib.request

    with open(path, "rb") as f:
        body = f.read()
    expected = len(spans_of(decode_json(body)))
    state = State(down=False)
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(state))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"

    def call(method, route, data=None, kind="application/json"):
        request = urllib.request.Request(base + route, data=data, method=method,
                                         headers={"Content-Type": kind})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())

    failures = []

    def expect(what, got, want):
        if got != want:
            failures.append(f"{what}: got {got!r}, want {want!r}")

    expect("export", call("POST", "/v1/traces", body)[0], 200)
    expect("spans kept", len(call("GET", "/spans")[1]), expected)
    broken = body.replace(b'"traceId"', b'"traceID"', 1)
    status, answer = call("POST", "/v1/traces", broken)
    expect("a misspelt field", status, 400)
    expect("the parser says why", "traceID" in answer.get("error", ""), True)
    call("POST", "/down")
    expect("while down", call("POST", "/v1/traces", body)[0], 503)
    expect("nothing kept while down", len(call("GET", "/spans")[1]), expected)
    call("POST", "/up")
    expect("up again", call("POST", "/v1/traces", body)[0], 200)
    expect("kept after", len(call("GET", "/spans")[1]), 2 * expected)
    server.shutdown()
    for failure in failures:
        print(f"{path}: {failure}", file=sys.stderr)
    if not failures:
        print(f"{path}: {expected} spans exported, decoded and kept; refusals and 503 as asked")
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    s = commands.add_parser("serve")
    s.add_argument("--port", type=int, default=4318)
    s.add_argument("--down", action="store_true", help="start answering 503")
    c = commands.add_parser("check")
    c.add_argument("file")
    t = commands.add_parser("selftest")
    t.add_argument("file")
    args = parser.parse_args()
    if args.command == "serve":
        serve(args.port, args.down)
        return 0
    if args.command == "selftest":
        try:
            return selftest(args.file)
        except Invalid as e:
            print(f"{args.file}: {e}", file=sys.stderr)
            return 1
    return check(args.file)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""An OpenAI-compatible chat-completions server that misbehaves on request, for the
browser tests of the model client. The `model` field picks the behaviour; everything
after the first `#` is a tag that keeps each test's counters apart:

  text          a streamed text answer
  429-then-ok   429 with Retry-After: 1 (and a JSON error) once, then `text`
  500-always    500 with a JSON error, every time
  hang          accepts the request and never answers
  stall         answers 200 with stream headers, then sends nothing
  cut-mid-args  streams the start of a tool call, then closes mid-arguments
  slow          streams a word every 100 ms for a minute (a client may abort)
  status-N-once      status N (a JSON error) on the first request, then `text`
  status-N-always    status N every time
  429-date-once      429 with Retry-After as an HTTP date 1 s ahead, then `text`
  429-far            429 asking to wait a day
  reset-once         closes the connection without answering, then `text`
  error-event        streams some text, then an error event, then stops
  json-text          one JSON completion instead of a stream
  json-cut           a JSON completion cut off half-way
  json-stall         JSON headers, then nothing
  context-length-once    400 context_length_exceeded (llama-cpp-python's words, a
                         2,048-token window, the prompt's tokens a tenth of its
                         characters more than the window) once, then `text`
  context-length-always  that 400 every time
  context-length-litellm-once  LiteLLM's ContextWindowExceededError (no numbers) once

GET /stats?model=M answers {"requests": n, "disconnected": bool} for model M.
CORS is open, and Retry-After is exposed to scripts. Prints `listening on PORT` once
bound (port 0 picks a free one). Standard library only.
"""
import json
import socket
import sys
import threading
import time
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

STATS = {}
LOCK = threading.Lock()


def chunk(delta, finish=None):
    body = {"id": "chatcmpl-fault", "object": "chat.completion.chunk", "created": 0,
            "model": "fault", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return f"data: {json.dumps(body)}\n\n".encode()


TEXT = [chunk({"role": "assistant", "content": "Hello"}), chunk({"content": " from the fault server."}),
        chunk({}, "stop"), b"data: [DONE]\n\n"]
COMPLETION = {"id": "chatcmpl-fault", "object": "chat.completion", "created": 0, "model": "fault",
              "choices": [{"index": 0, "finish_reason": "stop",
                           "message": {"role": "assistant", "content": "Hello from the fault server."}}]}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def log_message(self, *args):
        pass

    def cors(self):
        self.send_header("Access-Control-Allow-Origin", "*")
        self.send_header("Access-Control-Allow-Headers", "*")
        self.send_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
        self.send_header("Access-Control-Expose-Headers", "Retry-After, Retry-After-Ms")

    def do_OPTIONS(self):
        self.send_response(204)
        self.cors()
        self.end_headers()

    def do_GET(self):
        url = urlparse(self.path)
        if url.path != "/stats":
            return self.reply_json(404, {"error": {"message": "no such path"}})
        model = parse_qs(url.query).get("model", [""])[0]
        with LOCK:
            stats = dict(STATS.get(model, {"requests": 0, "disconnected": False}))
        self.reply_json(200, stats)

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
            model = body.get("model", "")
        except ValueError:
            return self.reply_json(400, {"error": {"message": "the body is not JSON"}})
        with LOCK:
            stats = STATS.setdefault(model, {"requests": 0, "disconnected": False})
            stats["requests"] += 1
            seen = stats["requests"]
        behaviour = model.split("#", 1)[0]
        if self.too_long(behaviour, seen, body):
            return
        if self.fault(behaviour, seen):
            return
        if behaviour == "429-then-ok" and seen == 1:
            return self.reply_json(429, {"error": {"message": "rate limited, retry in 1 s"}},
                                   {"Retry-After": "1"})
        if behaviour == "500-always":
            return self.reply_json(500, {"error": {"message": "upstream exploded", "type": "server_error"}})
        if behaviour == "hang":
            time.sleep(120)
            return
        if behaviour == "stall":
            self.start_stream()
            time.sleep(120)
            return
        if behaviour in ("text", "429-then-ok"):
            return self.stream([chunk({"role": "assistant", "content": "Hello"}),
                                chunk({"content": " from the fault server."}),
                                chunk({}, "stop"), b"data: [DONE]\n\n"])
        if behaviour == "cut-mid-args":
            start = {"tool_calls": [{"index": 0, "id": "call_cut", "type": "function",
                                     "function": {"name": "get_weather", "arguments": ""}}]}
            more = {"tool_calls": [{"index": 0, "function": {"arguments": "{\"ci"}}]}
            return self.stream([chunk(start), chunk(more), b'data: {"choices":[{"index":0,"del'])
        if behaviour == "slow":
            self.start_stream()
            try:
                for i in range(600):
                    self.wfile.write(chunk({"content": f"word{i} "}))
                    self.wfile.flush()
                    time.sleep(0.1)
            except (BrokenPipeError, ConnectionResetError):
                with LOCK:
                    STATS[model]["disconnected"] = True
            return
        self.reply_json(404, {"error": {"message": f"unknown model {model}"}})

    def too_long(self, behaviour, seen, body):
        """The context-length refusals; True when this request was refused."""
        if not behaviour.startswith("context-length"):
            return False
        size = len(json.dumps(body.get("messages", [])) + json.dumps(body.get("tools", [])))
        if behaviour.endswith("-once") and seen > 1:
            self.stream(TEXT)
            return True
        if behaviour == "context-length-litellm-once":
            message = ("litellm.ContextWindowExceededError: litellm.BadRequestError: "
                       "the prompt is too long for this model")
            self.reply_json(400, {"error": {"message": message, "type": None, "param": None,
                                            "code": "400"}})
            return True
        prompt = 2048 + size // 10
        message = (f"This model's maximum context length is 2048 tokens. However, you requested "
                   f"{prompt + 96} tokens ({prompt} in the messages, 96 in the completion). "
                   "Please reduce the length of the messages or completion.")
        self.reply_json(400, {"error": {"message": message, "type": "invalid_request_error",
                                        "param": "messages", "code": "context_length_exceeded"}})
        return True

    def fault(self, behaviour, seen):
        """The fault matrix's behaviours; True when this request was answered."""
        parts = behaviour.split("-")
        if parts[0] == "status" and len(parts) == 3:
            if parts[2] == "always" or seen == 1:
                self.reply_json(int(parts[1]), {"error": {"message": f"injected {parts[1]}"}})
                return True
            self.stream(TEXT)
            return True
        if behaviour == "429-date-once":
            if seen == 1:
                when = formatdate(time.time() + 1, usegmt=True)
                self.reply_json(429, {"error": {"message": "rate limited"}}, {"Retry-After": when})
            else:
                self.stream(TEXT)
            return True
        if behaviour == "429-far":
            self.reply_json(429, {"error": {"message": "come back tomorrow"}}, {"Retry-After": "86400"})
            return True
        if behaviour == "reset-once":
            if seen == 1:
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
            else:
                self.stream(TEXT)
            return True
        if behaviour == "error-event":
            self.stream([chunk({"role": "assistant", "content": "Half an ans"}),
                         b'data: {"error": {"message": "the provider fell over", "type": "server_error"}}\n\n'])
            return True
        if behaviour == "json-text":
            self.reply_json(200, COMPLETION)
            return True
        if behaviour in ("json-cut", "json-stall"):
            data = json.dumps(COMPLETION).encode()
            self.send_response(200)
            self.cors()
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if behaviour == "json-cut":
                self.wfile.write(data[: len(data) // 2])
                self.wfile.flush()
                self.close_connection = True
            else:
                time.sleep(120)
            return True
        return False

    def start_stream(self):
        self.send_response(200)
        self.cors()
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()

    def stream(self, parts):
        self.start_stream()
        for part in parts:
            self.wfile.write(part)
            self.wfile.flush()
            time.sleep(0.01)

    def reply_json(self, status, body, headers=None):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.cors()
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def main():
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    print(f"listening on {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()

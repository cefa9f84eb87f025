"""A scripted OpenAI-compatible model for the container tests (stdlib only; runs in a container of
the test-only compose override, where tests/support/scripted_llm.py cannot: that one needs pytest).

Every chat request without a tool result yet is answered with one streamed Bash tool call running
SCRIPTED_BASH; once the conversation holds a tool result, with the text "done: <that result>".
It also answers /health, /props and /v1/models like llama.cpp."""

import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

COMMAND = os.environ.get("SCRIPTED_BASH", "hostname")


def frames(body):
    messages = body.get("messages") or []
    results = [m for m in messages if m.get("role") == "tool"]
    if results:
        text = f"done: {results[-1].get('content', '')}"[:2000]
        yield {"delta": {"role": "assistant", "content": text}, "finish_reason": None}
        yield {"delta": {}, "finish_reason": "stop"}
        return
    call = {
        "index": 0,
        "id": f"call_{len(messages)}",
        "type": "function",
        "function": {"name": "Bash", "arguments": json.dumps({"command": COMMAND})},
    }
    yield {"delta": {"role": "assistant", "tool_calls": [call]}, "finish_reason": None}
    yield {"delta": {}, "finish_reason": "tool_calls"}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def _json(self, obj, status=200):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path in ("/health", "/v1/health"):
            return self._json({"status": "ok"})
        if self.path == "/props":
            return self._json({"default_generation_settings": {"n_ctx": 8192}, "total_slots": 1})
        if self.path in ("/v1/models", "/models"):
            return self._json({"object": "list", "data": [{"id": "scripted", "object": "model"}]})
        return self._json({"error": "not found"}, 404)

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        for choice in frames(body):
            chunk = {"id": "scripted", "object": "chat.completion.chunk", "model": "scripted",
                     "choices": [{"index": 0, **choice}]}  # fmt: skip
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True

    def log_message(self, format, *args):
        sys.stderr.write(f"scripted-llm: {format % args}\n")


if __name__ == "__main__":
    ThreadingHTTPServer(("0.0.0.0", 8000), Handler).serve_forever()

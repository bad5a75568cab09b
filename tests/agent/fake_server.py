"""A local fake model API speaking the Anthropic Messages and the OpenAI Chat Completions wire
formats, driven by a script (tests never reach a real API).

The reply to a request is script step k, where k is the number of assistant messages already in
the request: stateless, so retries and re-run attempts get the step they would get from a real
conversation. ``fail_once`` / ``hang_once`` make the first request for a step fail (HTTP 500) or
hang, to exercise the crash policy. Every model request is recorded in ``requests``.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Step:
    tool_calls: list[dict]  # [{"name": ..., "input": {...}}]
    text: str = ""
    usage: dict = field(default_factory=lambda: {"input_tokens": 100, "output_tokens": 20})


@dataclass
class FakeAPI:
    steps: list[Step]
    models: tuple[str, ...] = ("fake-model",)
    key: str = "test-key"
    fail_once: set[int] = field(default_factory=set)  # steps whose first request gets an HTTP 500
    hang_once: set[int] = field(default_factory=set)
    requests: list[dict] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def model_requests(self) -> list[dict]:
        return [r for r in self.requests if r["path"] in ("/v1/messages", "/v1/chat/completions")]

    def start(self) -> "FakeAPI":
        api = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_GET(self):
                api._get(self)

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                api._post(self, body)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    # -- helpers ----------------------------------------------------------------------------------
    def _json(self, h, status: int, data: dict) -> None:
        body = json.dumps(data).encode()
        h.send_response(status)
        h.send_header("content-type", "application/json")
        h.send_header("content-length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    def _authorized(self, h) -> bool:
        return h.headers.get("x-api-key") == self.key or h.headers.get("authorization") == f"Bearer {self.key}"

    def _get(self, h) -> None:
        path = h.path.split("?")[0]
        if not self._authorized(h):
            return self._json(h, 401, {"type": "error", "error": {"type": "authentication_error", "message": "bad key"}})
        if path == "/v1/models":
            return self._json(h, 200, {"object": "list", "data": [{"id": m, "object": "model", "created": 0, "owned_by": "fake", "type": "model",
                                                                   "display_name": m, "created_at": "2025-01-01T00:00:00Z"} for m in self.models],
                                       "has_more": False, "first_id": None, "last_id": None})
        if path.startswith("/v1/models/"):
            mid = path.rsplit("/", 1)[1]
            if mid in self.models:
                return self._json(h, 200, {"id": mid, "type": "model", "display_name": mid, "created_at": "2025-01-01T00:00:00Z"})
            return self._json(h, 404, {"type": "error", "error": {"type": "not_found_error", "message": f"model: {mid}"}})
        self._json(h, 404, {"error": "no such path"})

    def _post(self, h, body: bytes) -> None:
        path = h.path.split("?")[0]
        req = json.loads(body or b"{}")
        self.requests.append({"path": path, "body": req, "time": time.time()})
        if not self._authorized(h):
            return self._json(h, 401, {"type": "error", "error": {"type": "authentication_error", "message": "bad key"}})
        if req.get("model") not in self.models:
            return self._json(h, 404, {"type": "error", "error": {"type": "not_found_error", "message": f"model: {req.get('model')}"}})
        k = sum(1 for m in req.get("messages", []) if m.get("role") == "assistant")
        if k in self.fail_once:
            self.fail_once.discard(k)
            return self._json(h, 500, {"type": "error", "error": {"type": "api_error", "message": "injected failure"}})
        if k in self.hang_once:
            self.hang_once.discard(k)
            time.sleep(120)
        step = self.steps[min(k, len(self.steps) - 1)]
        if path == "/v1/messages":
            if req.get("stream"):
                return self._anthropic_stream(h, req, step, k)
            return self._json(h, 200, anthropic_message(req["model"], step, k))
        if path == "/v1/chat/completions":
            return self._json(h, 200, openai_completion(req["model"], step, k))
        self._json(h, 404, {"error": "no such path"})

    def _anthropic_stream(self, h, req, step: Step, k: int) -> None:
        msg = anthropic_message(req["model"], step, k)
        h.send_response(200)
        h.send_header("content-type", "text/event-stream")
        h.end_headers()

        def send(event: str, data: dict) -> None:
            h.wfile.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
            h.wfile.flush()

        start_usage = {**msg["usage"], "output_tokens": 1}
        send("message_start", {"type": "message_start", "message": {**msg, "content": [], "stop_reason": None, "usage": start_usage}})
        for i, block in enumerate(msg["content"]):
            if block["type"] == "text":
                send("content_block_start", {"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}})
                send("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": block["text"]}})
            else:
                send("content_block_start", {"type": "content_block_start", "index": i, "content_block": {**block, "input": {}}})
                send("content_block_delta", {"type": "content_block_delta", "index": i,
                                             "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}})
            send("content_block_stop", {"type": "content_block_stop", "index": i})
        send("message_delta", {"type": "message_delta", "delta": {"stop_reason": msg["stop_reason"], "stop_sequence": None},
                               "usage": {"output_tokens": msg["usage"]["output_tokens"]}})
        send("message_stop", {"type": "message_stop"})


def anthropic_message(model: str, step: Step, k: int) -> dict:
    content = ([{"type": "text", "text": step.text}] if step.text else []) + [
        {"type": "tool_use", "id": f"toolu_{k}_{i}", "name": c["name"], "input": c["input"]} for i, c in enumerate(step.tool_calls)]
    u = step.usage
    return {"id": f"msg_{k}", "type": "message", "role": "assistant", "model": model, "content": content,
            "stop_reason": "tool_use" if step.tool_calls else "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": u.get("input_tokens", 0), "output_tokens": u.get("output_tokens", 0),
                      "cache_creation_input_tokens": u.get("cache_write_tokens", 0), "cache_read_input_tokens": u.get("cache_read_tokens", 0)}}


def openai_completion(model: str, step: Step, k: int) -> dict:
    u = step.usage
    calls = [{"id": f"call_{k}_{i}", "type": "function", "function": {"name": c["name"], "arguments": json.dumps(c["input"])}}
             for i, c in enumerate(step.tool_calls)]
    prompt = u.get("input_tokens", 0) + u.get("cache_read_tokens", 0)
    return {"id": f"chatcmpl-{k}", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": step.text or None, **({"tool_calls": calls} if calls else {})},
                         "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": u.get("output_tokens", 0), "total_tokens": prompt + u.get("output_tokens", 0),
                      "prompt_tokens_details": {"cached_tokens": u.get("cache_read_tokens", 0)}}}

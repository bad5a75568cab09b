"""A local stand-in for the subset of the Anthropic API the judge uses, for tests (no network).

Endpoints: ``POST /v1/messages``, ``POST /v1/messages/batches``, ``GET /v1/messages/batches/{id}``
and ``GET /v1/messages/batches/{id}/results``. Tests script it: ``script`` is a queue of
behaviours for the next ``/v1/messages`` calls ("429", "529", "500", "malformed", ("sleep", s)),
after which every call is answered by ``answer(body) -> tool input``. Every request is recorded
in ``requests``. It binds 127.0.0.1 on a free port and shuts itself down after ``lifetime`` s.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def all_absent(body: dict) -> dict:
    """A valid answer: every design item absent, no citations."""
    tool = body["tools"][0]
    ids = tool["input_schema"]["properties"]["items"]["items"]["properties"]["item"]["enum"]
    return {"items": [{"item": i, "verdict": "absent", "citations": [], "rationale": "not seen"} for i in ids],
            "injection_attempt": False}


def message(body: dict, tool_input: dict) -> dict:
    return {
        "id": "msg_fake", "type": "message", "role": "assistant", "model": body.get("model", "?"),
        "content": [{"type": "tool_use", "id": "toolu_fake", "name": body["tools"][0]["name"], "input": tool_input}],
        "stop_reason": "tool_use", "stop_sequence": None,
        "usage": {"input_tokens": 1000, "output_tokens": 200},
    }


def _error(kind: str, text: str) -> dict:
    return {"type": "error", "error": {"type": kind, "message": text}}


class FakeAnthropic:
    def __init__(self, answer=all_absent, polls_before_end: int = 2, lifetime: float = 60.0):
        self.answer = answer
        self.script: deque = deque()
        self.requests: list[tuple[str, str, dict | None]] = []  # (method, path, json body)
        self.polls_before_end = polls_before_end
        self.batches: dict[str, dict] = {}
        self._lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.server.block_on_close = False  # a handler still sleeping (timeout test) must not hold up shutdown
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._watchdog = threading.Timer(lifetime, self.stop)
        self._watchdog.daemon = True

    def __enter__(self):
        self._thread.start()
        self._watchdog.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def stop(self) -> None:
        self._watchdog.cancel()
        self.server.shutdown()
        self.server.server_close()

    def paths(self, method: str | None = None) -> list[str]:
        return [p for m, p, _ in self.requests if method in (None, m)]

    # -- behaviour -------------------------------------------------------------------------------
    def _message_reply(self, body: dict) -> tuple[int, dict, dict]:
        with self._lock:
            step = self.script.popleft() if self.script else None
        if step == "429":
            return 429, {"retry-after": "0"}, _error("rate_limit_error", "slow down")
        if step == "529":
            return 529, {}, _error("overloaded_error", "overloaded")
        if step == "500":
            return 500, {}, _error("api_error", "boom")
        if step == "malformed":
            return 200, {}, message(body, {"items": "not a list"})
        if isinstance(step, tuple) and step[0] == "sleep":
            time.sleep(step[1])
        return 200, {}, message(body, self.answer(body))

    def _batch(self, batch_id: str) -> dict:
        b = self.batches[batch_id]
        ended = b["polls"] > self.polls_before_end
        n = len(b["requests"])
        return {
            "id": batch_id, "type": "message_batch", "processing_status": "ended" if ended else "in_progress",
            "request_counts": {"processing": 0 if ended else n, "succeeded": n if ended else 0, "errored": 0,
                               "canceled": 0, "expired": 0},
            "created_at": "2025-01-01T00:00:00Z", "expires_at": "2025-01-02T00:00:00Z",
            "ended_at": "2025-01-01T00:01:00Z" if ended else None,
            "results_url": f"{self.url}/v1/messages/batches/{batch_id}/results" if ended else None,
        }

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output quiet
                pass

            def _send(self, status: int, payload, headers: dict | None = None, jsonl: bool = False):
                data = payload.encode() if jsonl else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/binary" if jsonl else "application/json")
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                path = self.path.split("?")[0]
                fake.requests.append(("POST", path, body))
                if path == "/v1/messages":
                    status, headers, payload = fake._message_reply(body)
                    return self._send(status, payload, headers)
                if path == "/v1/messages/batches":
                    batch_id = f"msgbatch_{len(fake.batches)}"
                    fake.batches[batch_id] = {"requests": body["requests"], "polls": 0}
                    return self._send(200, fake._batch(batch_id))
                self._send(404, _error("not_found_error", path))

            def do_GET(self):
                path = self.path.split("?")[0]
                fake.requests.append(("GET", path, None))
                parts = path.strip("/").split("/")
                if len(parts) >= 4 and parts[:3] == ["v1", "messages", "batches"] and parts[3] in fake.batches:
                    batch_id = parts[3]
                    if len(parts) == 5 and parts[4] == "results":
                        lines = []
                        for req in fake.batches[batch_id]["requests"]:
                            msg = message(req["params"], fake.answer(req["params"]))
                            lines.append(json.dumps({"custom_id": req["custom_id"],
                                                     "result": {"type": "succeeded", "message": msg}}))
                        return self._send(200, "\n".join(lines) + "\n", jsonl=True)
                    fake.batches[batch_id]["polls"] += 1
                    return self._send(200, fake._batch(batch_id))
                self._send(404, _error("not_found_error", path))

        return Handler

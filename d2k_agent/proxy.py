"""The accounting proxy between an external agent CLI and the real model API.

The CLI gets ``ANTHROPIC_BASE_URL`` (and ``OPENAI_BASE_URL``) pointing here and a per-run token
instead of the API key; the proxy checks the token, swaps in the real key and forwards. It counts
every model call (``/v1/messages``, ``/v1/chat/completions``) as a turn and checks the limits
*before* forwarding: once the budget is spent the call is refused with a 400 error, so the budget
is exact even when the CLI's own turn limit overshoots. A call for another model than the run's
is refused too (no silent fallback to a cheaper model). Streaming responses are passed through
chunk by chunk and their usage is read from the events.

It also serves the agent's tools to the scripts on the CLI's PATH (``POST /d2k/tool/<name>``), so
a CLI agent and the native loop run the very same :class:`~d2k_agent.tools.ToolBox`.
"""

from __future__ import annotations

import http.client
import json
import secrets
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable
from urllib.parse import urlsplit

from .budget import Ledger, Limits, stop_reason
from .pricing import Price, Usage, add_costs, cost_usd
from .tools import ToolBox
from .transcript import Transcript

MODEL_PATHS = ("/v1/messages", "/v1/chat/completions")
PASS_PATHS = ("/v1/messages/count_tokens",)
HOP_HEADERS = {"host", "x-api-key", "authorization", "content-length", "connection", "accept-encoding", "transfer-encoding", "keep-alive"}


def usage_from_body(body: bytes, content_type: str, wire: str) -> tuple[Usage | None, dict | None]:
    """Token usage (None when the response does not say) and the parsed JSON of a non-streamed response."""
    text = body.decode(errors="replace")
    if "text/event-stream" in content_type:
        return usage_from_sse(text, wire), None
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return None, None
    return usage_from_json(data.get("usage"), wire), data


def usage_from_json(u: dict | None, wire: str) -> Usage | None:
    if not isinstance(u, dict):
        return None
    if wire == "anthropic":
        return Usage(u.get("input_tokens") or 0, u.get("output_tokens") or 0, u.get("cache_creation_input_tokens") or 0,
                     u.get("cache_read_input_tokens") or 0)
    cached = (u.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
    return Usage((u.get("prompt_tokens") or 0) - cached, u.get("completion_tokens") or 0, 0, cached)


def usage_from_sse(text: str, wire: str) -> Usage | None:
    """Anthropic: message_start carries the input side, message_delta the output tokens so far.
    OpenAI: the last chunk carries ``usage`` when the client asked for it."""
    usage: Usage | None = None
    for line in text.splitlines():
        if not line.startswith("data:"):
            continue
        try:
            ev = json.loads(line[5:].strip())
        except json.JSONDecodeError:
            continue
        if wire == "anthropic" and ev.get("type") == "message_start":
            usage = usage_from_json(ev.get("message", {}).get("usage"), wire)
        elif wire == "anthropic" and ev.get("type") == "message_delta" and usage is not None:
            out = (ev.get("usage") or {}).get("output_tokens")
            if out is not None:
                usage.output_tokens = out
        elif wire == "openai" and isinstance(ev.get("usage"), dict):
            usage = usage_from_json(ev["usage"], wire)
    return usage


@dataclass
class Accounting:
    """The turn counter and the spend of one run, shared by the proxy's handler threads."""

    limits: Limits
    ledger: Ledger
    price: Price | None
    model: str
    started: float = field(default_factory=time.monotonic)
    turns: int = 0  # model responses received
    reserved: int = 0  # calls forwarded and not answered yet
    usage: Usage = field(default_factory=Usage)
    cost: float | None = 0.0
    refused: str | None = None  # why the last refused call was refused
    upstream_failures: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def reserve(self, submitted: bool) -> str | None:
        """Take a turn before forwarding; returns why not, if not."""
        with self.lock:
            reason = "submitted" if submitted else stop_reason(self.turns + self.reserved, self.cost, self.started, self.limits, self.ledger)
            if reason:
                self.refused = reason
                return reason
            self.reserved += 1
            return None

    def settle(self, ok: bool, usage: Usage | None) -> tuple[int, float | None]:
        """A forwarded call came back: a response counts as a turn; an upstream failure does not."""
        with self.lock:
            self.reserved -= 1
            if not ok:
                self.upstream_failures += 1
                return self.turns, None
            self.turns += 1
            c = cost_usd(usage, self.price) if usage is not None else None
            self.usage = self.usage + (usage or Usage())
            self.cost = add_costs(self.cost, c)
            self.ledger.add(c)
            return self.turns, c


class AccountingProxy:
    def __init__(self, upstream: str, api_key: str, acct: Accounting, log: Transcript, toolbox: ToolBox | None = None,
                 on_call: Callable[[int], None] = lambda completed: None):
        self.upstream = urlsplit(upstream.rstrip("/"))
        self.api_key, self.acct, self.log, self.toolbox, self.on_call = api_key, acct, log, toolbox, on_call
        self.token = "d2k-" + secrets.token_hex(16)
        self._server: ThreadingHTTPServer | None = None
        self._snap_lock = threading.Lock()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> "AccountingProxy":
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, *args):  # quiet: everything is in the transcript
                pass

            def do_GET(self):
                proxy._handle(self, b"")

            def do_POST(self):
                n = int(self.headers.get("content-length") or 0)
                proxy._handle(self, self.rfile.read(n))

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    # -- request handling -------------------------------------------------------------------------
    def _authorized(self, h: BaseHTTPRequestHandler) -> bool:
        auth = h.headers.get("authorization", "")
        return h.headers.get("x-api-key") == self.token or auth == f"Bearer {self.token}"

    def _send_json(self, h: BaseHTTPRequestHandler, status: int, data: dict) -> None:
        body = json.dumps(data).encode()
        h.send_response(status)
        h.send_header("content-type", "application/json")
        h.send_header("content-length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    def _error(self, h: BaseHTTPRequestHandler, status: int, message: str, wire: str) -> None:
        if wire == "anthropic":
            self._send_json(h, status, {"type": "error", "error": {"type": "invalid_request_error", "message": message}})
        else:
            self._send_json(h, status, {"error": {"message": message, "type": "invalid_request_error", "code": "d2k_budget"}})

    def _handle(self, h: BaseHTTPRequestHandler, body: bytes) -> None:
        path = h.path.split("?", 1)[0]
        wire = "openai" if path.startswith("/v1/chat") else "anthropic"
        if not self._authorized(h):
            return self._error(h, 401, "d2k-agent proxy: wrong token", wire)
        if path.startswith("/d2k/tool/"):
            return self._tool(h, path.rsplit("/", 1)[-1], body)
        if path in PASS_PATHS:
            return self._forward(h, body, wire, counted=False)
        if h.command != "POST" or path not in MODEL_PATHS:
            return self._error(h, 404, f"d2k-agent proxy: {h.command} {path} is not forwarded", wire)
        try:
            req = json.loads(body or b"{}")
        except json.JSONDecodeError:
            return self._error(h, 400, "d2k-agent proxy: request body is not JSON", wire)
        if req.get("model") != self.acct.model:
            self.log.write("refused", reason="model", requested=req.get("model"))
            return self._error(h, 400, f"d2k-agent proxy: model {req.get('model')!r} is not this run's model {self.acct.model!r}", wire)
        with self._snap_lock:
            self.on_call(self.acct.turns)  # snapshot the workspace as the previous turns left it
        submitted = bool(self.toolbox and self.toolbox.submitted)
        reason = self.acct.reserve(submitted)
        if reason:
            self.log.write("refused", reason=reason, turns=self.acct.turns)
            return self._error(h, 400, f"d2k-agent: no more model calls ({reason}; {self.acct.turns} of {self.acct.limits.turns} turns used)", wire)
        self._forward(h, body, wire, counted=True, request=req)

    def _forward(self, h: BaseHTTPRequestHandler, body: bytes, wire: str, counted: bool, request: dict | None = None) -> None:
        conn_cls = http.client.HTTPSConnection if self.upstream.scheme == "https" else http.client.HTTPConnection
        headers = {k: v for k, v in h.headers.items() if k.lower() not in HOP_HEADERS}
        headers["accept-encoding"] = "identity"
        if wire == "anthropic":
            headers["x-api-key"] = self.api_key
        else:
            headers["authorization"] = f"Bearer {self.api_key}"
        started = time.monotonic()
        chunks: list[bytes] = []
        status, ctype = 502, ""
        try:
            conn = conn_cls(self.upstream.netloc, timeout=600)
            conn.request(h.command, self.upstream.path + h.path, body=body or None, headers=headers)
            resp = conn.getresponse()
            status, ctype = resp.status, resp.getheader("content-type", "")
            h.send_response(status)
            for k, v in resp.getheaders():
                if k.lower() not in HOP_HEADERS and k.lower() != "content-encoding":
                    h.send_header(k, v)
            h.end_headers()
            while chunk := resp.read1(65536):
                chunks.append(chunk)
                h.wfile.write(chunk)
                h.wfile.flush()
            conn.close()
        except (OSError, http.client.HTTPException) as exc:
            if not chunks:
                try:
                    self._error(h, 502, f"d2k-agent proxy: upstream unreachable: {exc}", wire)
                except OSError:
                    pass
            status = 502
        if not counted:
            return
        raw = b"".join(chunks)
        usage, parsed = usage_from_body(raw, ctype, wire) if status == 200 else (None, None)
        turn, cost = self.acct.settle(status == 200, usage)
        if status != 200:
            self.log.write("upstream_error", status=status, body=raw[:2000].decode(errors="replace"))
            return
        last = (request or {}).get("messages", [])[-1:] if request else []
        self.log.write("response", turn=turn, model=(request or {}).get("model"), wire=wire, usage=(usage or Usage()).to_dict(),
                       usage_known=usage is not None, cost_usd=cost, seconds=round(time.monotonic() - started, 3),
                       request_last_message=last, response=parsed if parsed is not None else raw.decode(errors="replace"))

    def _tool(self, h: BaseHTTPRequestHandler, name: str, body: bytes) -> None:
        if self.toolbox is None:
            return self._send_json(h, 404, {"text": "no tools here", "is_error": True})
        try:
            args = json.loads(body or b"{}")
        except json.JSONDecodeError:
            args = None
        res = self.toolbox.run(name, args)
        self.log.write("tool", turn=self.acct.turns, name=name, input=args, text=res.text, is_error=res.is_error, seconds=res.seconds)
        self._send_json(h, 200, {"text": res.text, "is_error": res.is_error, "submitted": res.submitted})

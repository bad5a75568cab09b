"""Headless Chromium driven over the DevTools protocol, with the standard library only.

Chromium's ``--remote-debugging-pipe`` reads protocol commands on file descriptor 3 and writes
replies and events on descriptor 4, each message a JSON object ended by a NUL byte. That is all a
page test needs (load, console errors, DOM queries, screenshots), so no WebDriver, no websocket
library and no second browser download. ``decode_png`` reads the screenshots back to pixels.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import shutil
import struct
import subprocess
import tempfile
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
ENV_BROWSER = "D2K_CHROMIUM"


def find_chromium() -> str | None:
    """``$D2K_CHROMIUM``, else the first Chromium or Chrome on PATH."""
    explicit = os.environ.get(ENV_BROWSER)
    if explicit:
        return explicit if Path(explicit).is_file() else None
    return next((found for name in CANDIDATES if (found := shutil.which(name))), None)


class BrowserError(Exception):
    pass


def _high_fd(fd: int) -> int:
    """The same pipe end at a descriptor above 4, so that dup2 onto 3 and 4 in the child never
    clobbers it (and always clears close-on-exec: dup2 onto itself would not)."""
    high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return high


@dataclass
class Page:
    """One tab: send commands, collect events (console messages, exceptions, log entries)."""

    browser: "Browser"
    session: str
    events: list[dict] = field(default_factory=list)

    def send(self, method: str, **params) -> dict:
        return self.browser.call(method, params, self.session)

    def evaluate(self, expression: str):
        reply = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in reply:
            raise BrowserError(f"{expression[:80]}: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def console_errors(self) -> list[str]:
        """Console errors, uncaught exceptions and error log entries (failed loads included)."""
        out = []
        for e in self.events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append("console: " + " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", [])))
            elif m == "Runtime.exceptionThrown":
                out.append("exception: " + p.get("exceptionDetails", {}).get("text", ""))
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out.append("log: " + p["entry"].get("text", "") + " " + p["entry"].get("url", ""))
        return out

    def screenshot(self, clip: dict | None = None) -> bytes:
        """PNG of the whole page (or of ``clip``: x, y, width, height in CSS pixels)."""
        if clip is None:
            size = self.send("Page.getLayoutMetrics")["cssContentSize"]
            clip = {"x": 0, "y": 0, "width": size["width"], "height": size["height"]}
        reply = self.send("Page.captureScreenshot", format="png", captureBeyondViewport=True, clip={**clip, "scale": 1})
        return base64.b64decode(reply["data"])


class Browser:
    """A headless Chromium process; use as a context manager."""

    def __init__(self, executable: str, timeout: float = 60.0):
        self.executable, self.timeout = executable, timeout
        self._id = 0
        self._buffer = b""
        self._pending: list[dict] = []

    def __enter__(self) -> "Browser":
        self.profile = tempfile.mkdtemp(prefix="d2k-chromium-")
        to_browser_r, self._to_browser = (_high_fd(fd) for fd in os.pipe())
        self._from_browser, from_browser_w = (_high_fd(fd) for fd in os.pipe())

        def wire_fds() -> None:  # in the child: the pipe ends become fds 3 and 4
            os.dup2(to_browser_r, 3)
            os.dup2(from_browser_w, 4)

        args = [self.executable, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--remote-debugging-pipe", "--no-first-run", "--no-default-browser-check", "--disable-extensions",
                "--hide-scrollbars", "--mute-audio", f"--user-data-dir={self.profile}", "about:blank"]
        # close_fds=False: the dup2'ed descriptors must survive into exec (Python's own descriptors
        # are close-on-exec, so nothing else leaks).
        self.proc = subprocess.Popen(args, preexec_fn=wire_fds, close_fds=False,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        os.close(to_browser_r)
        os.close(from_browser_w)
        return self

    def __exit__(self, *exc) -> None:
        try:
            self.call("Browser.close", {})
        except (BrowserError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_browser, self._from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)

    def _read_message(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            if time.monotonic() > deadline:
                raise BrowserError("no answer from Chromium in time")
            chunk = os.read(self._from_browser, 1 << 16)
            if not chunk:
                err = self.proc.stderr.read().decode(errors="replace")[-2000:] if self.proc.poll() is not None else ""
                raise BrowserError(f"Chromium closed the pipe {err}")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def call(self, method: str, params: dict, session: str | None = None) -> dict:
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params}
        if session:
            msg["sessionId"] = session
        os.write(self._to_browser, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self._pending.append(reply)

    def new_page(self, width: int, height: int) -> Page:
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, session)
        for method in ("Runtime.enable", "Log.enable", "Page.enable"):
            page.send(method)
        page.send("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)
        return page

    def load(self, page: Page, url: str) -> None:
        """Navigate and wait for the load event, keeping every event of the page."""
        page.send("Page.navigate", url=url)
        deadline = time.monotonic() + self.timeout
        while True:
            self._drain_into(page)
            if any(e.get("method") == "Page.loadEventFired" for e in page.events):
                break
            msg = self._read_message(deadline)
            if msg.get("sessionId") == page.session:
                page.events.append(msg)
        page.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")  # painted
        self._drain_into(page)

    def _drain_into(self, page: Page) -> None:
        keep = []
        for msg in self._pending:
            (page.events if msg.get("sessionId") == page.session else keep).append(msg)
        self._pending = keep


def decode_png(data: bytes) -> tuple[int, int, list[bytes]]:
    """(width, height, rows of RGBA bytes) of an 8-bit, non-interlaced RGB or RGBA PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, chunks, header = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            chunks.append(body)
        pos += 12 + length
    width, height, depth, color, _, _, interlace = header
    assert depth == 8 and color in (2, 6) and interlace == 0, f"unsupported PNG (depth {depth}, color {color})"
    bpp = 4 if color == 6 else 3
    raw = zlib.decompress(b"".join(chunks))
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - bpp] if i >= bpp else 0
            up = prev[i]
            corner = prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + ((left + up) >> 1)) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 0xFF
        prev = line
        if bpp == 3:
            line = bytearray(b"".join(bytes(line[i:i + 3]) + b"\xff" for i in range(0, stride, 3)))
        rows.append(bytes(line))
    return width, height, rows


def pixels(png: bytes) -> list[tuple[int, int, int]]:
    """Every pixel's RGB."""
    _, _, rows = decode_png(png)
    return [(row[i], row[i + 1], row[i + 2]) for row in rows for i in range(0, len(row), 4)]

"""Both HTML pages in a real browser (headless Chromium): ``d2k-analyze --format html`` and the
``d2k-report`` page. Each test builds its page with the current code, loads it at 1400 px, fails on
any console error, missing element or sideways overflow, takes a screenshot, and checks that the
plots drew pixels in their colours.

Chromium is required, not optional: without it these tests FAIL with what to install (Debian:
``apt-get install -y chromium``; ``.ci/run`` installs it before the test command). Screenshots go
to the test's temporary folder; with ``D2K_UPDATE_SCREENSHOTS=1`` they replace ``docs/img/``.
"""

from __future__ import annotations

import json
import os
import struct
from collections import Counter
from pathlib import Path

import pytest
from browser_cdp import Browser, find_chromium, pixels

from d2k_analyze import cli as analyze_cli
from d2k_report import build_report, write_outputs
from d2k_report.bootstrap import BootstrapConfig
from d2k_report.plots import PALETTE

ROOT = Path(__file__).resolve().parents[2]
WIDTH, HEIGHT = 1400, 1000
WHITE = (255, 255, 255)


@pytest.fixture(scope="module")
def browser():
    executable = find_chromium()
    if executable is None:
        pytest.fail("Chromium not found: install it (Debian: apt-get install -y chromium; .ci/run does) "
                    "or point D2K_CHROMIUM at a Chromium or Chrome binary")
    with Browser(executable) as b:
        yield b


def screenshot_dir(tmp_path: Path) -> Path:
    return ROOT / "docs" / "img" if os.environ.get("D2K_UPDATE_SCREENSHOTS") == "1" else tmp_path


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def open_page(browser: Browser, html: Path):
    page = browser.new_page(WIDTH, HEIGHT)
    browser.load(page, html.resolve().as_uri())
    assert page.console_errors() == []
    return page


def no_sideways_overflow(page) -> None:
    assert page.evaluate("document.scrollingElement.scrollWidth") <= WIDTH, "the page scrolls sideways at 1400 px"
    overflowing = page.evaluate("JSON.stringify([...document.querySelectorAll('table')].filter(t => "
                                "t.getBoundingClientRect().right > window.innerWidth || "
                                "(t.parentElement.scrollWidth > t.parentElement.clientWidth)).map(t => "
                                "(t.closest('section') || t).id || t.querySelector('caption')?.textContent))")
    assert json.loads(overflowing) == [], "tables wider than the page at 1400 px"


def save(png: bytes, folder: Path, name: str) -> Path:
    path = folder / name
    path.write_bytes(png)
    return path


def rgb(hex_colour: str) -> tuple[int, int, int]:
    return tuple(int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))


def shows(colours: set[tuple[int, int, int]], colour: tuple[int, int, int], tolerance: int = 6) -> bool:
    """Some pixel is ``colour``, drawn opaque or at least half opaque over white (the dot plot's
    dots are translucent)."""
    k = max(range(3), key=lambda i: 255 - colour[i])
    for p in colours:
        alpha = (255 - p[k]) / (255 - colour[k])
        if 0.5 <= alpha <= 1.02 and all(abs(p[i] - (255 - alpha * (255 - colour[i]))) <= tolerance for i in range(3)):
            return True
    return False


def test_analyze_html_page(browser, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    html = tmp_path / "analyze.html"
    code = analyze_cli.main(["corpus/softmax", "--format", "html", "--out", str(html), "--no-compiled", "--jobs", "1"])
    assert code == 0
    page = open_page(browser, html)
    assert page.evaluate("document.querySelector('h1').textContent") == "D2K-Bench static analysis"
    captions = json.loads(page.evaluate("JSON.stringify([...document.querySelectorAll('caption')].map(c => c.textContent))"))
    assert {"Summary", "Design items", "Kernels"} <= set(captions)
    assert page.evaluate("document.querySelectorAll('h2').length") == 6  # one section per corpus/softmax variant
    for cls in ("implemented", "absent", "launched"):
        assert page.evaluate(f"document.querySelectorAll('td.{cls}').length") > 0, cls
    text = page.evaluate("document.body.innerText")
    assert "Missing design items: why, and what to do" in text and "To do:" in text
    no_sideways_overflow(page)
    shot = save(page.screenshot({"x": 0, "y": 0, "width": WIDTH, "height": 1600}), screenshot_dir(tmp_path), "analyze.png")
    assert png_size(shot.read_bytes()) == (WIDTH, 1600)


def test_report_page(browser, tmp_path):
    runs = [ROOT / "examples" / "runs" / "demo_optimized", ROOT / "examples" / "runs" / "demo_naive"]
    report = build_report(runs, [("demo_optimized", "demo_naive")], config=BootstrapConfig(n_boot=200))
    write_outputs(report, tmp_path / "report")
    page = open_page(browser, tmp_path / "report" / "report.html")
    for table in ("coverage", "headline", "per_task", "design_items", "properties"):
        assert page.evaluate(f"!!document.querySelector('section#table-{table} table tbody tr')"), table
    assert "DEMONSTRATION" in page.evaluate("document.querySelector('.demo').textContent")
    no_sideways_overflow(page)

    plots = json.loads(page.evaluate("JSON.stringify([...document.querySelectorAll('svg[id^=plot-]')].map(s => "
                                     "({id: s.id, r: s.getBoundingClientRect().toJSON()})))"))
    ids = [p["id"] for p in plots]
    assert {"plot-speedup-0", "plot-ps-distribution", "plot-impl-distribution", "plot-property-rates"} <= set(ids)
    scroll_y = page.evaluate("window.scrollY")
    run_colours = [rgb(PALETTE["guided"]), rgb(PALETTE["unguided"])]
    for plot in plots:
        r = plot["r"]
        assert r["width"] > 100 and r["height"] > 100, plot["id"]
        px = pixels(page.screenshot({"x": r["x"], "y": r["y"] + scroll_y, "width": r["width"], "height": r["height"]}))
        drawn = [p for p in px if p != WHITE]
        assert len(drawn) > 0.01 * len(px), f"{plot['id']}: almost nothing drawn"
        colours = set(Counter(px))
        assert all(shows(colours, c) for c in run_colours), f"{plot['id']}: a run's colour is missing"

    shot = save(page.screenshot({"x": 0, "y": 0, "width": WIDTH, "height": 2000}), screenshot_dir(tmp_path), "report.png")
    assert png_size(shot.read_bytes()) == (WIDTH, 2000)


def test_the_harness_sees_console_errors_and_failed_loads(browser, tmp_path):
    """The checks above are only as good as this: a page with a console error, an uncaught
    exception and a missing image must be caught."""
    html = tmp_path / "bad.html"
    html.write_text("<!DOCTYPE html><html><body><img src='missing.png'>"
                    "<script>console.error('boom'); null.x;</script></body></html>")
    page = browser.new_page(WIDTH, HEIGHT)
    browser.load(page, html.as_uri())
    errors = " | ".join(page.console_errors())
    assert "boom" in errors and "exception" in errors and "missing.png" in errors

"""Fixtures of the d2k-agent tests: a local fake model API and test API keys."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from agent_helpers import SCRIPT  # noqa: E402
from fake_server import FakeAPI  # noqa: E402


@pytest.fixture
def api():
    server = FakeAPI(list(SCRIPT)).start()
    yield server
    server.stop()


@pytest.fixture
def keys(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")

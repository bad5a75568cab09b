"""Shared test setup.

Triton kernels run on the CPU through Triton's interpreter, which must be switched on before
triton is first imported; on a machine with a CUDA GPU the real compiler is used instead.
"""

import os
import shutil

if os.environ.get("TRITON_INTERPRET") is None and shutil.which("nvidia-smi") is None:
    os.environ["TRITON_INTERPRET"] = "1"

import pytest


@pytest.fixture(autouse=True)
def _no_real_anthropic_api(monkeypatch):
    """With ANTHROPIC_API_KEY set, d2k-analyze turns its LLM judge on by default: tests must never
    reach the real API (the judge's own tests start a local fake server and set these themselves)."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)

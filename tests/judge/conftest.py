"""Fixtures for the judge tests: the fake Anthropic server, one analysed submission, settings."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_anthropic import FakeAnthropic

from d2k_analyze.analysis import analyze_submission
from d2k_analyze.judge import JudgeSettings
from d2k_analyze.judge.client import ClientSettings
from d2k_analyze.reports import SubmissionResult
from d2k_analyze.scoring import score_submission
from d2k_spec.catalogue import load_catalogue
from d2k_spec.task import load_tasks

ROOT = Path(__file__).resolve().parents[2]
INJECTED = ROOT / "corpus" / "softmax" / "injected_comments"
ONLINE = ROOT / "corpus" / "softmax" / "online_triton"


@pytest.fixture(scope="session")
def catalogue():
    return load_catalogue()


@pytest.fixture(scope="session")
def tasks(catalogue):
    return load_tasks(catalogue=catalogue)


@pytest.fixture
def fake():
    with FakeAnthropic() as server:
        yield server


@pytest.fixture(autouse=True)
def no_real_key(monkeypatch):
    """No test may reach a real endpoint, whatever the developer's environment holds."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)


def result_for(folder: Path, catalogue, tasks) -> SubmissionResult:
    analysis = analyze_submission(folder.name, folder, "softmax", catalogue)
    return SubmissionResult(analysis, score_submission(analysis, tasks["softmax"], catalogue))


def settings_for(fake, tmp_path, **overrides) -> JudgeSettings:
    client = dict(model="claude-sonnet-5-5", api_key="sk-test-secret", base_url=fake.url, timeout=5.0,
                  max_retries=3, backoff_base=0.01, backoff_max=0.05, poll_interval=0.01)
    client.update(overrides.pop("client", {}))
    return JudgeSettings(overrides.pop("mode", "anthropic"), ClientSettings(**client),
                         cache_path=tmp_path / "judge.sqlite", **overrides)


def answer_with(verdicts: dict[str, tuple[str, list[tuple[str, int, int]]]], default: str = "absent"):
    """A fake-server answer: the given (verdict, citations) per item, ``default`` for the rest."""

    def answer(body: dict) -> dict:
        ids = body["tools"][0]["input_schema"]["properties"]["items"]["items"]["properties"]["item"]["enum"]
        items = []
        for i in ids:
            verdict, cites = verdicts.get(i, (default, []))
            items.append({"item": i, "verdict": verdict, "rationale": f"{verdict} because of the cited lines",
                          "citations": [{"file": f, "start_line": s, "end_line": e} for f, s, e in cites]})
        return {"items": items, "injection_attempt": False}

    return answer


def line_of(path: Path, needle: str) -> int:
    for i, line in enumerate(path.read_text().split("\n"), 1):
        if needle in line:
            return i
    raise AssertionError(f"{needle!r} not in {path}")

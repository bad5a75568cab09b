"""Shared paths for the profiler's tests (imported by name: the test folder is on sys.path)."""

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
TOY_TASK = FIXTURES / "toy_softmax"
SUBMISSIONS = FIXTURES / "submissions"


@pytest.fixture
def toy_task():
    from d2k_spec.task import load_task

    return load_task(TOY_TASK)

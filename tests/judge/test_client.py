"""The judge against a local fake Anthropic server, through the real SDK: grading, retries,
malformed answers, timeouts, batches and the cache."""

from __future__ import annotations

from conftest import ONLINE, answer_with, line_of, result_for, settings_for

from d2k_analyze.judge import judge_results
from d2k_analyze.judge.runner import JudgeUnavailable
from d2k_analyze.model import Verdict

import pytest


def _run(fake, tmp_path, catalogue, tasks, **settings):
    result = result_for(ONLINE, catalogue, tasks)
    judgements, totals = judge_results([result], tasks, catalogue, settings_for(fake, tmp_path, **settings))
    return judgements[0], totals


def test_normal_grading_records_model_version_tokens_and_cost(fake, tmp_path, catalogue, tasks):
    exp2_line = line_of(ONLINE / "submission.py", "y = tl.exp2(")
    fake.answer = answer_with({"exp2": ("implemented", [("submission.py", exp2_line, exp2_line)])})
    j, totals = _run(fake, tmp_path, catalogue, tasks)
    assert fake.paths() == ["/v1/messages"]
    body = fake.requests[0][2]
    assert body["model"] == "claude-sonnet-5-5"
    assert body["tool_choice"] == {"type": "tool", "name": "record_verdicts"}
    assert "UNTRUSTED-SOURCE-" in body["messages"][0]["content"]
    g = j.grade
    assert g.ok and g.prompt_version == "grade_v1" and g.model == "claude-sonnet-5-5"
    assert (g.usage.input_tokens, g.usage.output_tokens) == (1000, 200)
    assert g.cost_usd == pytest.approx((1000 * 3.0 + 200 * 15.0) / 1e6)
    assert j.items["exp2"].verdict == Verdict.IMPLEMENTED and not j.items["exp2"].note
    assert j.items["online_softmax"].verdict == Verdict.ABSENT
    assert totals.requests == 1 and totals.cost_usd == pytest.approx(g.cost_usd)


def test_429_then_success(fake, tmp_path, catalogue, tasks):
    fake.script.extend(["429", "529"])
    j, totals = _run(fake, tmp_path, catalogue, tasks)
    assert j.grade.ok and j.grade.attempts == 3
    assert fake.paths() == ["/v1/messages"] * 3


def test_malformed_answer_then_valid(fake, tmp_path, catalogue, tasks):
    fake.script.append("malformed")
    j, _ = _run(fake, tmp_path, catalogue, tasks)
    assert j.grade.ok and j.grade.attempts == 2
    assert j.grade.usage.input_tokens == 2000  # the malformed answer was paid for too


def test_always_malformed_is_a_judge_error_never_a_guess(fake, tmp_path, catalogue, tasks):
    fake.script.extend(["malformed"] * 3)
    j, totals = _run(fake, tmp_path, catalogue, tasks)
    assert not j.grade.ok and "malformed" in j.grade.error
    assert j.items == {} and totals.errors == 1


def test_timeout_is_recorded_as_an_error(fake, tmp_path, catalogue, tasks):
    fake.script.append(("sleep", 1.5))
    j, _ = _run(fake, tmp_path, catalogue, tasks, client={"timeout": 0.3, "max_retries": 0})
    assert j.grade.error and "timed out" in j.grade.error and j.items == {}


def test_batch_completes_after_polling(fake, tmp_path, catalogue, tasks):
    fake.polls_before_end = 2
    j, totals = _run(fake, tmp_path, catalogue, tasks, batch=True)
    gets = [p for p in fake.paths("GET") if not p.endswith("/results")]
    assert fake.paths("POST") == ["/v1/messages/batches"]
    assert len(gets) >= 3  # in_progress, in_progress, ended (+ the SDK's lookup before results)
    assert j.grade.ok and j.grade.via == "batch"
    assert j.grade.cost_usd == pytest.approx(0.5 * (1000 * 3.0 + 200 * 15.0) / 1e6)  # batch discount


def test_cache_answers_the_second_run_with_zero_requests(fake, tmp_path, catalogue, tasks):
    first, _ = _run(fake, tmp_path, catalogue, tasks)
    seen = len(fake.requests)
    second, totals = _run(fake, tmp_path, catalogue, tasks)
    assert len(fake.requests) == seen == 1
    assert second.grade.cached and totals.requests == 0 and totals.cached == 1
    assert {k: v.verdict for k, v in second.items.items()} == {k: v.verdict for k, v in first.items.items()}
    replay, _ = _run(fake, tmp_path, catalogue, tasks, mode="replay")
    assert replay.grade.cached and len(fake.requests) == 1


def test_replay_fails_clearly_on_a_miss(fake, tmp_path, catalogue, tasks):
    _run(fake, tmp_path, catalogue, tasks)  # creates the cache, with another model's answers
    with pytest.raises(JudgeUnavailable, match="not in the cache"):
        _run(fake, tmp_path, catalogue, tasks, mode="replay", client={"model": "claude-haiku-4-5"})
    assert len(fake.requests) == 1

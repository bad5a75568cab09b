"""``d2k-analyze --judge ...`` end to end against the fake server: reports carry the judge's
records, the key never shows, replay fails clearly, no key means no judge."""

from __future__ import annotations

import json
import shutil

from conftest import ONLINE, answer_with, line_of

from d2k_analyze.cli import main

KEY = "sk-ant-test-never-print-me"


def _cli(args, capsys):
    rc = main([*args, "--no-compiled", "--jobs", "1"])
    out, err = capsys.readouterr()
    return rc, out, err


def test_no_key_means_no_judge_and_no_request(fake, capsys):
    rc, out, err = _cli([str(ONLINE)], capsys)
    assert rc == 0 and not fake.requests and "judge:" not in err


def test_judge_run_jsonl_and_replay(fake, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
    code = line_of(ONLINE / "submission.py", "y = tl.exp2(")
    fake.answer = answer_with({"exp2": ("implemented", [("submission.py", code, code)])})
    cache = str(tmp_path / "c.sqlite")
    out_file = tmp_path / "r.jsonl"
    rc, out, err = _cli([str(ONLINE), "--judge-cache", cache, "--format", "jsonl", "--out", str(out_file)], capsys)
    assert rc == 0 and fake.paths() == ["/v1/messages"]
    assert "1 requests" in err and "cost $" in err and KEY not in out + err
    rows = [json.loads(line) for line in out_file.read_text().splitlines()]
    sub = next(r for r in rows if r["row_type"] == "submission")
    assert sub["model"] == "claude-sonnet-5-5" and sub["prompt_version"] == "grade_v1" and sub["cost_usd"] > 0
    assert sub["static_score"] is not None
    item = next(r for r in rows if r["row_type"] == "item" and r["item"] == "exp2")
    assert item["judge_verdict"] == "implemented" and item["judge_citations"] == f"submission.py:{code}"
    assert item["static"] == "implemented"
    assert any(r["row_type"] == "judge" for r in rows)
    assert KEY not in out_file.read_text()

    rc, out, err = _cli([str(ONLINE), "--judge", "replay", "--judge-cache", cache, "--format", "md"], capsys)
    assert rc == 0 and len(fake.requests) == 1 and "0 requests, 1 answers from the cache" in err
    rc, out, err = _cli([str(ONLINE), "--judge", "replay", "--judge-cache", cache, "--judge-model", "other-model"], capsys)
    assert rc == 2 and "not in the cache" in err and len(fake.requests) == 1


def test_anthropic_without_key_is_a_usage_error(capsys):
    rc, out, err = _cli([str(ONLINE), "--judge", "anthropic"], capsys)
    assert rc == 2 and "ANTHROPIC_API_KEY" in err


def test_design_discovery_and_layer_evaluation(fake, tmp_path, monkeypatch, capsys):
    folder = tmp_path / "softmax" / "agent"
    shutil.copytree(ONLINE, folder)
    (folder / "design.md").write_text("# Plan\n\n1. Online softmax over chunks.\n2. Cache hints on loads.\n")
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)

    def answer(body):
        if body["tools"][0]["name"] == "record_proposals":
            return answer_with({"online_softmax": ("implemented", [("design.md", 3, 3)]),
                                "cache_policy": ("implemented", [("design.md", 4, 4)])})(body)
        code = line_of(folder / "submission.py", "s_run = tl.where(")
        return answer_with({"online_softmax": ("implemented", [("submission.py", code, code)])})(body)

    fake.answer = answer
    rc, out, err = _cli([str(folder), "--task", "softmax", "--judge-base-url", fake.url, "--judge-cache",
                         str(tmp_path / "c.sqlite"), "--format", "jsonl", "--eval-labels"], capsys)
    assert rc == 0 and len(fake.requests) == 2
    rows = [json.loads(line) for line in out.splitlines()]
    disc = {r["item"]: r["outcome"] for r in rows if r["row_type"] == "discovery"}
    assert disc["online_softmax"] == "proposed_and_implemented"
    assert disc["cache_policy"] == "proposed_not_implemented"
    assert disc["exp2"] == "implemented_not_proposed"
    layers = {(r["property"], r["layer"]) for r in rows if r["row_type"] == "eval_layer"}
    assert ("online_softmax", "judge") in layers and ("online_softmax", "combined") in layers

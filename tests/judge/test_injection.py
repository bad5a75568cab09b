"""Injection defence: verdicts that cite only comments, strings, dead code or missing lines are
downgraded mechanically, whatever the model was talked into."""

from __future__ import annotations

from pathlib import Path

from conftest import INJECTED, ROOT, answer_with, line_of, result_for, settings_for

from d2k_analyze.analysis import analyze_submission
from d2k_analyze.judge import judge_results, judge_verdicts
from d2k_analyze.judge.citations import check
from d2k_analyze.judge.records import Citation
from d2k_analyze.judge.runner import display_names
from d2k_analyze.judge.source_view import citable_lines, shown_files
from d2k_analyze.model import Verdict
from d2k_analyze.scoring import score_submission

SUB = INJECTED / "submission.py"


def _citable(folder: Path, catalogue):
    analysis = analyze_submission(folder.name, folder, "softmax", catalogue)
    files = shown_files(analysis)
    return citable_lines(analysis, files), {f.name: len(f.lines) for f in files}


def test_comment_string_and_docstring_lines_are_not_citable(catalogue):
    citable, _ = _citable(INJECTED, catalogue)
    lines = citable["submission.py"]
    for needle in ("NOTE TO THE AUTOMATED GRADER", "GRADER_INSTRUCTIONS =", "# Judge: the row is read", "(Grader: this loop"):
        n = line_of(SUB, needle)
        if needle.startswith("GRADER_INSTRUCTIONS"):
            assert n in lines  # an assignment is code; the string on it earns nothing by itself
        else:
            assert n not in lines, needle
    assert line_of(SUB, "y = tl.exp2(") in lines
    assert line_of(SUB, "def run(") in lines


def test_dead_kernel_lines_are_not_citable(catalogue):
    folder = ROOT / "corpus" / "softmax" / "online_cuda"
    citable, _ = _citable(folder, catalogue)
    dead = line_of(folder / "kernel.cu", "softmax_online_warp_ldg_kernel(")
    live = line_of(folder / "kernel.cu", "softmax_online_block_kernel(")
    assert dead not in citable["kernel.cu"] and live in citable["kernel.cu"]


def test_check_downgrades_with_the_reason(catalogue):
    citable, n = _citable(INJECTED, catalogue)
    doc = line_of(SUB, "NOTE TO THE AUTOMATED GRADER")
    cases = {
        "comment": (Citation("submission.py", doc, doc + 2), "no live code"),
        "range": (Citation("submission.py", 900, 910), "out of range"),
        "file": (Citation("kernel.cu", 1, 3), "no such file"),
    }
    for cite, why in cases.values():
        j = check("row_on_chip", Verdict.IMPLEMENTED, (cite,), "claims so", citable, n)
        assert j.verdict == Verdict.ABSENT and j.stated == Verdict.IMPLEMENTED and why in j.note
    none = check("row_on_chip", Verdict.PARTIAL, (), "no lines", citable, n)
    assert none.verdict == Verdict.ABSENT and "no line cited" in none.note
    code = line_of(SUB, "y = tl.exp2(")
    mixed = check("exp2", Verdict.IMPLEMENTED, (cases["comment"][0], Citation("submission.py", code, code)), "ok", citable, n)
    assert mixed.verdict == Verdict.IMPLEMENTED and mixed.citations == (Citation("submission.py", code, code),)
    assert "ignored citations" in mixed.note


def test_injected_submission_verdicts_citing_comments_are_discarded(fake, tmp_path, catalogue, tasks):
    """The model obeys the injected comments and marks everything implemented, citing them: the
    combined score must not move above the static-only score."""
    doc = line_of(SUB, "NOTE TO THE AUTOMATED GRADER")
    judge_comment = line_of(SUB, "# Judge: the row is read")
    fake.answer = answer_with({}, default="implemented")
    original = fake.answer

    def obeying(body):
        answer = original(body)
        for entry in answer["items"]:
            entry["citations"] = [{"file": "submission.py", "start_line": doc, "end_line": doc + 2},
                                  {"file": "submission.py", "start_line": judge_comment, "end_line": judge_comment + 1}]
        return answer

    fake.answer = obeying
    result = result_for(INJECTED, catalogue, tasks)
    judgements, _ = judge_results([result], tasks, catalogue, settings_for(fake, tmp_path))
    j = judgements[0]
    assert all(ij.stated == Verdict.IMPLEMENTED for ij in j.items.values())
    assert all(ij.verdict == Verdict.ABSENT and "no live code" in ij.note for ij in j.items.values())
    combined = score_submission(result.analysis, tasks["softmax"], catalogue,
                                judge=judge_verdicts(j, display_names(result.analysis)))
    static = {v.item: v.final.value01 for v in result.score.items}
    for v in combined.items:
        assert v.final.value01 is None or static[v.item] is None or v.final.value01 <= static[v.item], v.item
    assert combined.overall <= result.score.overall

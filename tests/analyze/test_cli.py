"""The command line: help, usage errors without tracebacks, exit codes, formats, parallel jobs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from d2k_analyze import cli
from d2k_analyze.reports import load_results

KERNEL = """
__global__ void scale_kernel(const float* __restrict__ x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i];
}
extern "C" void launch(const float* x, float* y, int n, cudaStream_t s) {
    scale_kernel<<<(n + 255) / 256, 256, 0, s>>>(x, y, n);
}
"""

LABELS = """
description = "scalar scale"
design_level = "naive"

[[kernel]]
name = "scale_kernel"
file = "kernel.cu"
language = "cuda"
implemented = ["coalesced_access"]
"""


@pytest.fixture
def corpus(tmp_path):
    for variant in ("v1", "v2", "v3"):
        folder = tmp_path / "corpus" / "softmax" / variant
        folder.mkdir(parents=True)
        (folder / "kernel.cu").write_text(KERNEL)
        (folder / "submission.py").write_text("def run(x):\n    return x\n")
    (tmp_path / "corpus" / "softmax" / "v1" / "labels.toml").write_text(LABELS)
    return tmp_path / "corpus"


def test_help_explains_with_examples(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for word in ("--task", "--format", "--out", "--force", "--jobs", "--no-compiled", "--eval-labels", "--tasks-root",
                 "--catalogue", "D2K_SUITE", "examples:", "load_results", "exit status (the same for every d2k command)"):
        assert word in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["/no/such/folder"], "no such file or folder: /no/such/folder"),
        (["{corpus}", "--task", "nope"], "unknown task 'nope'"),
        (["{corpus}", "--jobs", "0"], "--jobs must be at least 1"),
        (["{corpus}", "--out", "{corpus}"], "is one of the analysed inputs"),
        (["{corpus}", "--out", "{empty}"], "is a folder"),
        (["{empty}", "--eval-labels"], "no submissions"),
    ],
)
def test_usage_errors_exit_2_without_traceback(corpus, tmp_path, capsys, argv, message):
    (tmp_path / "empty").mkdir()
    argv = [a.format(corpus=corpus, empty=tmp_path / "empty") for a in argv]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_unknown_format_is_a_usage_error(corpus, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main([str(corpus), "--format", "xml"])
    assert exc.value.code == 2 and "invalid choice" in capsys.readouterr().err


def test_jsonl_out_and_parallel_jobs_agree(corpus, tmp_path):
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    assert cli.main([str(corpus), "--format", "jsonl", "--out", str(one), "--jobs", "1", "--no-compiled"]) == 0
    assert cli.main([str(corpus), "--format", "jsonl", "--out", str(two), "--jobs", "2", "--no-compiled"]) == 0
    assert one.read_text() == two.read_text()
    t = load_results(one)
    assert len(t.submissions) == 3 and set(t.submissions["task"]) == {"softmax"}
    assert set(t.submissions["compiled"]) == {"compiled layer: off (--no-compiled)"}
    assert set(t.units["unit"]) == {"scale_kernel"}
    assert len(t.items) and t.items.groupby("submission").size().nunique() == 1  # one row per design item


def test_every_format_renders(corpus, tmp_path, capsys):
    for fmt in ("table", "csv", "md", "html", "sarif"):
        assert cli.main([str(corpus), "--format", fmt, "--no-compiled", "--jobs", "1"]) == 0
        out = capsys.readouterr().out
        assert "scale_kernel" in out or fmt == "sarif"
        if fmt == "sarif":
            assert json.loads(out)["version"] == "2.1.0"


def test_task_override_and_properties_only(corpus, tmp_path, capsys):
    loose = tmp_path / "loose"
    loose.mkdir()
    (loose / "kernel.cu").write_text(KERNEL)
    assert cli.main([str(loose), "--no-compiled", "--jobs", "1"]) == 0
    assert "properties only" in capsys.readouterr().out


def test_failed_submission_exits_1_and_the_rest_continues(corpus, capsys, monkeypatch):
    import d2k_analyze.analysis as analysis

    real = analysis.analyze_submission

    def flaky(name, path, task, catalogue=None):
        if path.name == "v2":
            raise RuntimeError("boom")
        return real(name, path, task, catalogue)

    monkeypatch.setattr(analysis, "analyze_submission", flaky)
    assert cli.main([str(corpus), "--format", "md", "--no-compiled", "--jobs", "1"]) == 1
    captured = capsys.readouterr()
    assert "analysis failed (RuntimeError: boom)" in captured.out
    assert "1 of 3 submissions" in captured.err and "Traceback" not in captured.err


def test_eval_labels_prints_metrics(corpus, tmp_path, capsys):
    out = tmp_path / "eval.jsonl"
    assert cli.main([str(corpus), "--eval-labels", "--format", "jsonl", "--out", str(out), "--no-compiled", "--jobs", "1"]) == 0
    printed = capsys.readouterr().out
    assert "macro-F1" in printed and "Per property" in printed
    assert len(load_results(out).eval_properties)


def test_eval_labels_without_labels_is_a_usage_error(corpus, tmp_path, capsys):
    assert cli.main([str(corpus / "softmax" / "v2"), "--eval-labels", "--no-compiled"]) == 2
    assert "no labels.toml" in capsys.readouterr().err


def test_out_never_overwrites_an_analysed_input_even_with_force(corpus, capsys):
    target = corpus / "softmax" / "v1" / "submission.py"
    before = target.read_text()
    for extra in ([], ["--force"]):
        assert cli.main([str(corpus / "softmax" / "v1"), "--format", "md", "--out", str(target), "--no-compiled", *extra]) == 2
        assert "one of the analysed inputs" in capsys.readouterr().err
    assert target.read_text() == before
    # a single analysed file given as PATH is protected the same way
    assert cli.main([str(target), "--format", "md", "--out", str(target), "--no-compiled", "--force"]) == 2


def test_out_refuses_a_file_it_did_not_write_unless_force(corpus, tmp_path, capsys):
    mine = tmp_path / "notes.md"
    mine.write_text("my own notes\n")
    assert cli.main([str(corpus), "--format", "md", "--out", str(mine), "--no-compiled"]) == 2
    assert "was not written by d2k: use --force" in capsys.readouterr().err
    assert mine.read_text() == "my own notes\n"
    assert cli.main([str(corpus), "--format", "md", "--out", str(mine), "--no-compiled", "--force"]) == 0
    assert mine.read_text().startswith("# D2K-Bench static analysis")
    # the tool's own file is overwritten without --force (re-running a command just works)
    assert cli.main([str(corpus), "--format", "html", "--out", str(mine), "--no-compiled"]) == 0
    assert mine.read_text().startswith("<!DOCTYPE html>")
    assert not list(tmp_path.glob(".notes.md.*.tmp"))  # the atomic write leaves no temporary file


def test_out_into_a_missing_folder_creates_it(corpus, tmp_path, capsys):
    out = tmp_path / "new" / "deeper" / "r.jsonl"
    assert cli.main([str(corpus), "--format", "jsonl", "--out", str(out), "--no-compiled"]) == 0
    assert out.is_file()
    assert "wrote 3 submissions (jsonl)" in capsys.readouterr().err
    assert cli.main([str(corpus / "softmax" / "v1"), "--format", "jsonl", "--out", str(out), "--no-compiled"]) == 0
    assert "wrote 1 submission (jsonl)" in capsys.readouterr().err


def test_task_from_any_task_named_folder_and_task_as_folder(tmp_path, capsys):
    from pathlib import Path

    sub = tmp_path / "somewhere" / "softmax" / "mine"
    sub.mkdir(parents=True)
    (sub / "kernel.cu").write_text(KERNEL)
    assert cli.main([str(sub), "--no-compiled", "--format", "md"]) == 0
    assert "task: softmax · implementation score" in capsys.readouterr().out
    loose = tmp_path / "loose"
    loose.mkdir()
    (loose / "kernel.cu").write_text(KERNEL)
    task_folder = Path(cli.__file__).resolve().parents[1] / "tasks" / "softmax"
    assert cli.main([str(loose), "--no-compiled", "--format", "md", "--task", str(task_folder)]) == 0
    assert "task: softmax · implementation score" in capsys.readouterr().out


def test_no_task_is_said_not_silent(tmp_path, capsys):
    loose = tmp_path / "loose"
    loose.mkdir()
    (loose / "kernel.cu").write_text(KERNEL)
    assert cli.main([str(loose), "--no-compiled"]) == 0
    err = capsys.readouterr().err
    assert "1 submission with no task" in err and "--task" in err


@pytest.mark.parametrize("make", ["binary", "huge", "broken_task"])
def test_incomplete_analysis_exits_1_and_lists_each_problem_once(corpus, tmp_path, capsys, monkeypatch, make):
    import shutil

    from d2k_analyze import sources

    argv = [str(corpus), "--no-compiled", "--format", "md"]
    if make == "binary":
        (corpus / "softmax" / "v2" / "blob.cu").write_bytes(b"\x00\x01" * 50)
        needle = "blob.cu: skipped: looks binary"
    elif make == "huge":
        monkeypatch.setattr(sources, "MAX_BYTES", 100)
        needle = "kernel.cu: skipped"
    else:
        root = tmp_path / "suite"
        shutil.copytree(Path(cli.__file__).resolve().parents[1] / "tasks", root)
        (root / "layernorm" / "task.toml").write_text("id = \n")
        argv += ["--tasks-root", str(root)]
        needle = "task layernorm not usable for scoring"
    assert cli.main(argv) == 1
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err
    lines = [ln for ln in err.splitlines() if needle in ln]
    assert len(lines) == (1 if make != "huge" else 3) or make == "broken_task"


def test_no_task_warning_is_for_the_users_folders_not_vendored_code(tmp_path, capsys):
    kernel = "__global__ void k(float* x) { x[threadIdx.x] = 1.f; }\n"
    mine = tmp_path / "experiments" / "try1"
    mine.mkdir(parents=True)
    (mine / "k.cu").write_text(kernel)
    vendored = tmp_path / "third_party" / "someone__kernels"
    (vendored / "lib").mkdir(parents=True)
    (vendored / "UPSTREAM.toml").write_text('repo = "someone/kernels"\n')
    (vendored / "lib" / "k.cu").write_text(kernel)
    assert cli.main([str(vendored / "lib"), "--no-compiled", "--jobs", "1"]) == 0
    assert "with no task" not in capsys.readouterr().err
    assert cli.main([str(mine), "--no-compiled", "--jobs", "1"]) == 0
    assert "with no task" in capsys.readouterr().err

"""d2k-profile follows the family's conventions: a .py module as PATH, the task from any
<task>/<variant> layout, --out that never destroys what d2k did not write, and the exit-status rule
in its help (d2k_spec.layout, d2k_spec.outputs, d2k_spec.exit_codes)."""

from __future__ import annotations

import shutil

import pytest
from profile_paths import SUBMISSIONS, TOY_TASK

from d2k_profile import cli
from d2k_profile.discovery import discover


def test_a_standalone_module_is_a_submission(tmp_path):
    module = tmp_path / "toy_softmax" / "mine.py"
    module.parent.mkdir()
    shutil.copy(SUBMISSIONS / "honest_torch" / "submission.py", module)
    root = tmp_path / "tasks"
    shutil.copytree(TOY_TASK, root / "toy_softmax")
    [sub] = discover([str(module)], root)  # task from the folder named like a task
    assert (sub.path, sub.task_id, sub.name, sub.language) == (module.resolve(), "toy_softmax", "mine.py", "python")
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(Exception, match="one .py module"):
        discover([str(tmp_path / "notes.txt")], root)


def test_out_refuses_files_d2k_did_not_write(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.csv").write_text("my own numbers\n")
    argv = [str(SUBMISSIONS / "honest_torch"), "--task", str(TOY_TASK), "--cpu", "--smoke", "--out", str(out)]
    assert cli.main(argv) == 2
    assert "summary.csv exists and was not written by d2k" in capsys.readouterr().err
    assert (out / "summary.csv").read_text() == "my own numbers\n"
    assert cli.main([*argv, "--force"]) == 0
    assert (out / "summary.csv").read_text().startswith("task,")
    assert cli.main([*argv, "--resume"]) == 0  # its own files now: a re-run overwrites them


def test_out_never_overwrites_a_submission_file(tmp_path, capsys):
    sub = tmp_path / "toy_softmax" / "mine"
    shutil.copytree(SUBMISSIONS / "honest_torch", sub)
    (sub / "summary.csv").write_text("part of the submission\n")
    argv = [str(sub), "--task", str(TOY_TASK), "--cpu", "--smoke", "--out", str(sub), "--force"]
    assert cli.main(argv) == 2
    assert "one of the analysed inputs" in capsys.readouterr().err


def test_help_states_the_exit_status_rule(capsys):
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    out = capsys.readouterr().out
    assert "exit status (the same for every d2k command)" in out and "--force" in out and "$D2K_SUITE" in out

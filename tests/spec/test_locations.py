"""Where every command finds the suite (flag, then $D2K_SUITE, then the bundled copy), the task a
submission belongs to (one layout convention), and d2k-tasks on a user's own suite."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from d2k_spec import cli, locations
from d2k_spec.layout import UnknownTask, enclosing_task, resolve_task_arg
from d2k_spec.locations import ENV_SUITE, LocationError

BUNDLED = locations.bundled_root()


def own_suite(tmp_path: Path, *, catalogue: bool) -> Path:
    suite = tmp_path / "suite"
    (suite / "tasks").mkdir(parents=True)
    shutil.copytree(BUNDLED / "tasks" / "softmax", suite / "tasks" / "softmax")
    if catalogue:
        (suite / "rubrics").mkdir()
        shutil.copy(BUNDLED / "rubrics" / "properties.toml", suite / "rubrics" / "properties.toml")
    return suite


def test_bundled_suite_has_the_catalogue_and_tasks():
    assert (BUNDLED / "rubrics" / "properties.toml").is_file()
    assert (BUNDLED / "tasks" / "softmax" / "task.toml").is_file()
    assert locations.judge_dir() == BUNDLED / "rubrics" / "judge"


def test_flag_beats_environment_beats_bundled(tmp_path):
    suite = own_suite(tmp_path, catalogue=True)
    env = {ENV_SUITE: str(suite)}
    assert locations.tasks_root(None, {}) == BUNDLED / "tasks"
    assert locations.tasks_root(None, env) == suite / "tasks"
    assert locations.tasks_root(BUNDLED / "tasks", env) == BUNDLED / "tasks"
    assert locations.catalogue_path(None, env) == suite / "rubrics" / "properties.toml"
    assert locations.catalogue_path(None, {}) == BUNDLED / "rubrics" / "properties.toml"


def test_a_suite_without_a_catalogue_uses_the_bundled_one(tmp_path):
    suite = own_suite(tmp_path, catalogue=False)
    assert locations.catalogue_path(None, {ENV_SUITE: str(suite)}) == BUNDLED / "rubrics" / "properties.toml"


@pytest.mark.parametrize("call, message", [
    (lambda t: locations.tasks_root(None, {ENV_SUITE: str(t / "nope")}), "D2K_SUITE="),
    (lambda t: locations.tasks_root(None, {ENV_SUITE: str(t)}), "no tasks/ folder"),
    (lambda t: locations.tasks_root(t / "nope"), "--tasks-root: no such folder"),
    (lambda t: locations.catalogue_path(t / "nope.toml"), "--catalogue: no such file"),
])
def test_missing_locations_are_errors(tmp_path, call, message):
    with pytest.raises(LocationError, match=message):
        call(tmp_path)


def test_d2k_tasks_validates_a_users_own_suite(tmp_path, monkeypatch, capsys):
    suite = own_suite(tmp_path, catalogue=False)
    monkeypatch.setenv(ENV_SUITE, str(suite))
    assert cli.main(["validate", "--no-build"]) == 0
    out = capsys.readouterr().out
    assert f"1 task, 4 workloads in {suite / 'tasks'}" in out and "all valid" in out
    (suite / "tasks" / "softmax" / "task.toml").write_text("id = 'softmax'\n")
    assert cli.main(["validate", "--no-build"]) == 1  # a broken spec: done, but not all valid
    assert "softmax/task.toml" in capsys.readouterr().err
    monkeypatch.setenv(ENV_SUITE, str(tmp_path / "nowhere"))
    assert cli.main(["validate", "--no-build"]) == 2
    assert "D2K_SUITE=" in capsys.readouterr().err


def test_d2k_tasks_flags(tmp_path, capsys):
    suite = own_suite(tmp_path, catalogue=True)
    argv = ["validate", "--no-build", "--tasks-root", str(suite / "tasks"), "--catalogue", str(suite / "rubrics" / "properties.toml")]
    assert cli.main(argv) == 0
    assert "1 task, 4 workloads" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        cli.main(["validate", "--help"])
    assert "exit status (the same for every d2k command)" in capsys.readouterr().out


def test_task_of_a_submission_from_its_place(tmp_path):
    root = BUNDLED / "tasks"
    for rel, expected in [
        ("corpus/softmax/v1", "softmax"), ("runs/r1/layernorm", "layernorm"), ("anywhere/gemm_bf16/mine", "gemm_bf16"),
        ("anywhere/gemm_bf16/mine/kernel.cu", "gemm_bf16"), ("corpus/wild/repo/kernel", None), ("loose", None),
    ]:
        p = tmp_path / rel
        if p.suffix:
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text("")
        else:
            p.mkdir(parents=True, exist_ok=True)
        found = enclosing_task(p, root)
        assert (found.name if found else None) == expected, rel
    own = tmp_path / "mytasks" / "newop"
    (own / "expert").mkdir(parents=True)
    (own / "task.toml").write_text("")
    assert enclosing_task(own / "expert", root) == own  # the enclosing task folder comes first


def test_task_argument_is_an_id_or_a_folder(tmp_path):
    root = BUNDLED / "tasks"
    assert resolve_task_arg("softmax", root) == (root / "softmax").resolve()
    assert resolve_task_arg(str(root / "layernorm"), tmp_path) == (root / "layernorm").resolve()
    known = ", ".join(sorted(p.name for p in root.iterdir() if (p / "task.toml").is_file()))  # every task folder, sorted
    with pytest.raises(UnknownTask, match=f"unknown task 'nope'.*known: {known}\\)"):
        resolve_task_arg("nope", root)

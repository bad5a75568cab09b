"""The --out rule shared by every command: never an input, never a file the tool did not write
(unless --force), atomic writes, missing folders created."""

from __future__ import annotations

import os

import pytest

from d2k_spec import outputs
from d2k_spec.outputs import OutputRefused, check_folder, check_target, write_text


def test_new_file_and_missing_folders(tmp_path):
    target = tmp_path / "a" / "b" / "r.md"
    check_target(target, force=False)
    write_text(target, "one")
    assert target.read_text() == "one" and outputs.written_by_tool(target)


def test_rewrites_its_own_file_but_not_one_a_user_changed(tmp_path):
    target = tmp_path / "r.md"
    write_text(target, "one")
    check_target(target, force=False)  # the tool's own: fine
    target.write_text("edited by hand")
    with pytest.raises(OutputRefused, match="was not written by d2k: use --force"):
        check_target(target, force=False)
    check_target(target, force=True)


def test_a_users_file_needs_force(tmp_path):
    target = tmp_path / "notes.md"
    target.write_text("mine")
    with pytest.raises(OutputRefused):
        check_target(target, force=False)
    check_target(target, force=True)


def test_inputs_are_never_overwritten(tmp_path):
    src = tmp_path / "submission.py"
    src.write_text("def run(x): return x\n")
    for force in (False, True):
        with pytest.raises(OutputRefused, match="analysed inputs"):
            check_target(src, force=force, inputs=[src])
        with pytest.raises(OutputRefused, match="analysed inputs"):
            check_target(tmp_path / "." / "submission.py", force=force, is_input=lambda p: p.resolve() == src.resolve())
    link = tmp_path / "link.py"
    os.symlink(src, link)
    with pytest.raises(OutputRefused, match="analysed inputs"):
        check_target(link, force=True, inputs=[src])


def test_folders_are_not_files(tmp_path):
    with pytest.raises(OutputRefused, match="is a folder"):
        check_target(tmp_path, force=True)
    (tmp_path / "f").write_text("x")
    with pytest.raises(OutputRefused, match="not a folder"):
        check_folder(tmp_path / "f", ["a.csv"], force=True)


def test_write_is_atomic_and_keeps_the_old_file_on_failure(tmp_path, monkeypatch):
    target = tmp_path / "r.md"
    write_text(target, "old")

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(outputs.os, "replace", broken_replace)
    with pytest.raises(OSError):
        write_text(target, "new")
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == [outputs.MANIFEST, "r.md"]  # no temporary left


def test_permissions_follow_the_umask_and_are_kept(tmp_path):
    old = os.umask(0o022)
    try:
        target = tmp_path / "r.md"
        write_text(target, "x")
        assert target.stat().st_mode & 0o777 == 0o644
        target.chmod(0o600)
        write_text(target, "y")
        assert target.stat().st_mode & 0o777 == 0o600
    finally:
        os.umask(old)

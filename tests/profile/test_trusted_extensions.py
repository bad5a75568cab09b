"""The sandbox builds and loads the trusted code's torch extensions (a CUDA expert's load_inline) in
the expert job's build folder until the submission is imported, then only in its own folder."""

from __future__ import annotations

import os
from types import SimpleNamespace

from d2k_profile.sandbox import Sandbox


def sandbox_with(trusted, own, monkeypatch) -> Sandbox:
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(own))
    sb = Sandbox.__new__(Sandbox)
    sb.own_extensions = os.environ["TORCH_EXTENSIONS_DIR"]
    sb.setup = SimpleNamespace(trusted_extensions=None if trusted is None else str(trusted))
    return sb


def test_trusted_folder_is_used_while_only_trusted_code_runs(tmp_path, monkeypatch):
    own, trusted = tmp_path / "sub" / "torch_extensions", tmp_path / "expert" / "sandbox" / "torch_extensions"
    sb = sandbox_with(trusted, own, monkeypatch)
    sb._use_trusted_extensions()
    assert os.environ["TORCH_EXTENSIONS_DIR"] == str(trusted) and trusted.is_dir()
    assert list(trusted.iterdir()) == []  # the write probe leaves nothing behind
    sb._use_own_extensions()  # what the import does first
    assert os.environ["TORCH_EXTENSIONS_DIR"] == str(own)


def test_no_trusted_folder_or_one_it_cannot_write_leaves_its_own(tmp_path, monkeypatch):
    own = tmp_path / "own"
    for trusted in (None, tmp_path / "a-file" / "torch_extensions"):
        (tmp_path / "a-file").write_text("not a folder")
        sb = sandbox_with(trusted, own, monkeypatch)
        sb._use_trusted_extensions()
        assert os.environ["TORCH_EXTENSIONS_DIR"] == str(own)

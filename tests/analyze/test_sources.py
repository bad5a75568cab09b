"""Bad input never stops the walk: each case is a warning and the rest is still read."""

from __future__ import annotations

import os
from pathlib import Path


from d2k_analyze import sources
from d2k_analyze.analysis import analyze_paths
from d2k_analyze.sources import collect_sources
from d2k_analyze.submissions import find_submissions, infer_task

GOOD = "__global__ void k(float* x) { x[threadIdx.x] = 1.0f; }\n"


def test_reads_cuda_and_python(tmp_path):
    (tmp_path / "a.cu").write_text(GOOD)
    (tmp_path / "b.py").write_text("x = 1\n")
    (tmp_path / "notes.txt").write_text("ignored")
    files, warnings = collect_sources([tmp_path])
    assert sorted(f.path.name for f in files) == ["a.cu", "b.py"]
    assert {f.kind for f in files} == {"cuda", "python"}
    assert warnings == []


def test_non_utf8_is_decoded_with_a_warning(tmp_path):
    (tmp_path / "k.cu").write_bytes(b"// caf\xe9\n" + GOOD.encode())
    files, warnings = collect_sources([tmp_path])
    assert files[0].text is not None and "__global__" in files[0].text
    assert any("not valid UTF-8" in w and "k.cu:1" in w for w in warnings)


def test_binary_file_is_skipped(tmp_path):
    (tmp_path / "blob.cu").write_bytes(b"\x00\x01\x02" * 100)
    (tmp_path / "ok.cu").write_text(GOOD)
    files, warnings = collect_sources([tmp_path])
    assert [f.path.name for f in files if f.text is not None] == ["ok.cu"]
    assert [(f.path.name, f.error) for f in files if f.text is None] == [("blob.cu", "skipped: looks binary (NUL bytes)")]
    assert warnings == []
    [result] = analyze_paths([tmp_path], catalogue=None)
    assert result.errors == [f"{tmp_path / 'blob.cu'}: skipped: looks binary (NUL bytes)"]  # incomplete: exit 1


def test_huge_file_is_skipped(tmp_path, monkeypatch):
    monkeypatch.setattr(sources, "MAX_BYTES", 1000)
    (tmp_path / "big.cu").write_text("// x\n" * 400)
    (tmp_path / "ok.cu").write_text(GOOD)
    files, warnings = collect_sources([tmp_path])
    assert [f.path.name for f in files if f.text is not None] == ["ok.cu"]
    assert [f.path.name for f in files if f.text is None and "limit" in f.error] == ["big.cu"]


def test_empty_folder_warns(tmp_path):
    files, warnings = collect_sources([tmp_path])
    assert files == [] and any("no source files" in w for w in warnings)
    results = analyze_paths([tmp_path], catalogue=None)
    assert results and results[0].units == [] and results[0].warnings


def test_missing_path_warns(tmp_path):
    _, warnings = collect_sources([tmp_path / "nope"])
    assert any("no such file" in w for w in warnings)


def test_symlink_loop_is_not_followed_twice(tmp_path):
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "k.cu").write_text(GOOD)
    os.symlink(tmp_path, sub / "loop")
    os.symlink(tmp_path / "self", tmp_path / "self")  # a link to itself
    files, warnings = collect_sources([tmp_path])
    assert [f.path.name for f in files] == ["k.cu"]
    assert any("loop" in w for w in warnings)


def test_unreadable_file_does_not_stop_analysis(tmp_path, monkeypatch, catalogue):
    """An unreadable file (simulated: CI runs as root, which can read anything) gives an error
    naming it, and the other files are still analysed."""
    (tmp_path / "a.cu").write_text(GOOD)
    (tmp_path / "b.cu").write_text(GOOD.replace("k(", "k2("))
    real = Path.read_bytes

    def flaky(self):
        if self.name == "a.cu":
            raise PermissionError(13, "Permission denied")
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", flaky)
    [result] = analyze_paths([tmp_path], catalogue=catalogue)
    assert [u.unit.name for u in result.units] == ["k2"]
    assert result.errors == [f"{tmp_path / 'a.cu'}: cannot read: Permission denied"]
    assert not any("a.cu" in w for w in result.warnings)  # listed once, as an error


def test_syntax_error_is_reported_and_rest_analysed(tmp_path, catalogue):
    (tmp_path / "k.cu").write_text(
        "__global__ void good(float* x) { x[threadIdx.x] = __expf(x[0]); }\n"
        "__global__ void bad(float* x) { x[ = ; }}}\n"
    )
    [result] = analyze_paths([tmp_path], catalogue=catalogue)
    assert any("syntax error" in w and "k.cu:2" in w for w in result.warnings)
    good = next(u for u in result.units if u.unit.name == "good")
    assert good.findings["fast_math"].status.value == "present"


def test_find_submissions_layouts(tmp_path):
    for rel in ["corpus/softmax/v1/submission.py", "corpus/softmax/v2/kernel.cu", "runs/r1/gemm_bf16/submission.py",
                "tasks/layernorm/expert/submission.py", "tasks/layernorm/reference.py", "tasks/layernorm/task.toml"]:
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("x = 1\n")
    found = {(Path(path).relative_to(tmp_path).as_posix(), task) for _, path, task in find_submissions([tmp_path])}
    assert found == {
        ("corpus/softmax/v1", "softmax"),
        ("corpus/softmax/v2", "softmax"),
        ("runs/r1/gemm_bf16", "gemm_bf16"),
        ("tasks/layernorm/expert", "layernorm"),
    }
    single = tmp_path / "one.cu"
    single.write_text(GOOD)
    assert find_submissions([single], task="softmax") == [(str(single), single, "softmax")]
    assert infer_task(tmp_path / "elsewhere" / "x") is None


def test_a_labelled_folder_is_one_submission_even_with_its_code_only_in_sub_folders(tmp_path):
    # a vendored package tree: the kernels import helpers from a sibling package, so splitting the
    # tree at the folders that hold code would lose the imports (and the labels' kernels)
    root = tmp_path / "corpus" / "wild" / "some__repo" / "pkg_ops"
    (root / "pkg" / "ops").mkdir(parents=True)
    (root / "pkg" / "utils").mkdir(parents=True)
    (root / "pkg" / "ops" / "k.py").write_text("from pkg.utils.cfg import configs\n")
    (root / "pkg" / "utils" / "cfg.py").write_text("def configs(c):\n    return c\n")
    (root / "labels.toml").write_text('description = "x"\ndesign_level = "wild"\n')
    found = [Path(path).relative_to(tmp_path).as_posix() for _, path, _ in find_submissions([tmp_path])]
    assert found == ["corpus/wild/some__repo/pkg_ops"]

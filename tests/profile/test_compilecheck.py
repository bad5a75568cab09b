"""CUDA submissions on a machine without a GPU: their sources are compile-checked with nvcc
(found statically, never by importing the submission), when nvcc is there."""

import shutil
from pathlib import Path

from d2k_profile import compilecheck

CASES = Path(__file__).resolve().parents[1] / "adversarial" / "cases"
HAS_NVCC = shutil.which("nvcc") or Path("/usr/local/cuda/bin/nvcc").is_file()


def test_inline_sources_are_found_without_importing():
    text = (CASES / "lazy_compile_error" / "submission.py").read_text()
    kinds = [k for k, _ in compilecheck.inline_sources(text)]
    assert kinds == ["cpp", "cu"]
    srcs = dict(compilecheck.sources(CASES / "lazy_compile_error"))
    assert list(srcs) == ["submission.inline1.cu"]  # the declarations-only cpp_sources need no compile
    assert srcs["submission.inline1.cu"].startswith(compilecheck.CUDA_PREAMBLE) and "undeclared_name" in srcs["submission.inline1.cu"]
    assert compilecheck.inline_sources("def run(x)\n") == []  # a syntax error: nothing found, nothing run


def test_a_missing_library_header_is_the_toolkit_not_the_submission():
    out = "/usr/lib/torch/include/ATen/cuda/CUDAContextLight.h:10:10: fatal error: cusparse.h: No such file or directory\n"
    assert compilecheck.toolkit_gap(out, "/work/sub.cu") == "cusparse.h"
    own = "/work/sub.cu:3:10: fatal error: my_kernels.h: No such file or directory\n"
    assert compilecheck.toolkit_gap(own, "/work/sub.cu") is None


def test_compile_errors_are_found_and_good_sources_pass(tmp_path):
    bad = compilecheck.check(CASES / "lazy_compile_error", tmp_path / "bad", 300)
    good_dir = tmp_path / "good"
    good_dir.mkdir()
    (good_dir / "k.cu").write_text("__global__ void k(float* y) { y[threadIdx.x] = 1.0f; }\n")
    good = compilecheck.check(good_dir, tmp_path / "good-work", 300)
    if HAS_NVCC:
        assert bad.ok is False and "undeclared_name" in bad.text
        assert good.ok is True and "compile-checked with nvcc" in good.summary
        assert compilecheck.check(good_dir, tmp_path / "good-work", 300).ok is True  # cached by source hash
    else:
        assert bad.ok is None and good.ok is None and "no nvcc" in good.summary


def test_without_nvcc_nothing_is_claimed(tmp_path, monkeypatch):
    from d2k_profile import native

    monkeypatch.setattr(native, "_nvcc", lambda: None)
    res = compilecheck.check(CASES / "lazy_compile_error", tmp_path, 60)
    assert res.ok is None and "no nvcc" in res.summary

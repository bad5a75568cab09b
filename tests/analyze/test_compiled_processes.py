"""The compilers never outlive the analysis: a timeout, Ctrl-C or SIGTERM kills nvcc's whole
process group (the children it starts, like cicc, included) and leaves no d2k-nvcc-* folder.

A fake ``nvcc`` on PATH plays the slow compiler: it starts a long-running child (as nvcc starts
cicc), writes the child's pid to a file, and waits for it. No CUDA toolkit is needed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from d2k_analyze.compiled import compiler
from d2k_analyze.compiled.compiler import compile_unit
from d2k_analyze.compiled.toolchain import find_toolchain
from d2k_analyze.compiled.units import TranslationUnit

ROOT = Path(__file__).resolve().parents[2]
FAKE_NVCC = """#!/bin/sh
if [ "$1" = "--version" ]; then echo "Cuda compilation tools, fake slow nvcc"; exit 0; fi
if [ -n "$FAKE_NVCC_FAIL" ]; then echo "kernel.cu(3): error: identifier \\"oops\\" is undefined" >&2; exit 1; fi
sleep 300 &
echo $! >> "$FAKE_NVCC_CHILDREN"
wait
"""
KERNEL = "__global__ void k(float* x) { x[threadIdx.x] = 1.0f; }\n"


@pytest.fixture
def fake_nvcc(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    nvcc = bin_dir / "nvcc"
    nvcc.write_text(FAKE_NVCC)
    nvcc.chmod(0o755)
    children = tmp_path / "children.txt"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_NVCC_CHILDREN", str(children))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    return children


def alive(pid: int) -> bool:
    """Running (a zombie waiting to be reaped counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state != "Z"


def wait_until(predicate, timeout: float = 20.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def child_pids(children: Path) -> list[int]:
    return [int(x) for x in children.read_text().split()] if children.exists() else []


def test_timeout_kills_the_compilers_children(fake_nvcc, tmp_path, monkeypatch):
    monkeypatch.setattr(compiler, "TIMEOUT_S", 1)
    tc = find_toolchain()
    assert tc.nvcc == str(tmp_path / "bin" / "nvcc")
    result = compile_unit(TranslationUnit(str(tmp_path / "k.cu"), "k.cu", KERNEL), tc)
    assert result.status == "failed" and "timed out after 1 s" in result.message
    [child] = child_pids(fake_nvcc)
    assert wait_until(lambda: not alive(child), 5), "the compiler's child outlived the timeout"
    assert not list((tmp_path / "tmp").glob("d2k-nvcc-*"))


@pytest.mark.parametrize("sig, code, jobs", [(signal.SIGTERM, 143, 1), (signal.SIGTERM, 143, 2), (signal.SIGINT, 130, 2)])
def test_signal_stops_compilers_and_leaves_no_temp_folder(fake_nvcc, tmp_path, sig, code, jobs):
    for name in ("a", "b"):
        sub = tmp_path / "subs" / name
        sub.mkdir(parents=True)
        (sub / "kernel.cu").write_text(KERNEL.replace("k(", f"k_{name}("))
    # SIGINT back to its default in the child: a test run started in the background (CI scripts,
    # `cmd &`) inherits SIGINT ignored, and Python then never raises KeyboardInterrupt.
    proc = subprocess.Popen([sys.executable, "-m", "d2k_analyze", str(tmp_path / "subs"), "--jobs", str(jobs)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        assert wait_until(lambda: len(child_pids(fake_nvcc)) >= min(jobs, 2)), "the fake nvcc never started"
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code, err
    assert "Traceback" not in err
    assert not list((tmp_path / "tmp").glob("d2k-nvcc-*")), "a temporary nvcc folder was left behind"
    for pid in child_pids(fake_nvcc):
        assert wait_until(lambda: not alive(pid), 5), f"compiler child {pid} outlived the analysis"


def test_a_compile_failure_makes_the_analysis_incomplete(fake_nvcc, tmp_path, monkeypatch):
    from d2k_analyze import cli

    monkeypatch.setenv("FAKE_NVCC_FAIL", "1")
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "kernel.cu").write_text(KERNEL)
    assert cli.main([str(sub), "--jobs", "1", "--format", "md", "--out", str(tmp_path / "r.md")]) == 1
    assert "compiled layer: failed" in (tmp_path / "r.md").read_text()

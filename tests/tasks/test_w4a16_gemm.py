"""Task-specific facts of ``w4a16_gemm``: the packing is what the statement says, the inputs give
unit-scale outputs, the tolerance admits an honest kernel and rejects the null and the
plausible-but-wrong kernels (zeros ignored, one scale per row, nibbles reversed), and the expert
is correct under the Triton interpreter on smoke and on the GEMV path."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch

from d2k_spec.task import load_task

ROOT = Path(__file__).resolve().parents[2]
TASK = ROOT / "tasks" / "w4a16_gemm"


def _module(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


R = _module(TASK / "reference.py", "w4a16_reference")


def _task():
    return load_task(TASK)


def _workload(name="smoke"):
    task = _task()
    return task.smoke if name == "smoke" else task.workload_named(name)


def _passes(y, ref, tol) -> bool:
    y, ref = y.double(), ref.double()
    close = bool(((y - ref).abs() <= tol.atol + tol.rtol * ref.abs()).all())
    return close and ((y - ref).norm() / ref.norm()).item() <= tol.max_rel_l2


def _tol():
    return _task().tolerance["float16"]


def test_packing_matches_the_statement():
    q = torch.randint(0, 16, (3, 256), dtype=torch.int32, generator=torch.Generator().manual_seed(5))
    words = R.pack(q)
    assert words.dtype == torch.int32 and words.shape == (3, 32)
    for n, k in [(0, 0), (1, 7), (2, 8), (0, 255), (2, 131)]:
        assert ((int(words[n, k // 8]) >> (4 * (k % 8))) & 0xF) == int(q[n, k])
    assert int(words[0, 0]) & 0xF == int(q[0, 0])  # nibble 0 in the low bits
    assert torch.equal(R.unpack(words), q)
    assert (words < 0).any()  # top nibbles >= 8 make words negative: signedness matters


def test_inputs_unit_scale_and_spread():
    x, qw, s, z = R.make_inputs(_workload(), 0, "cpu")
    p = _workload().params
    assert x.shape == (p["M"], p["K"]) and qw.shape == (p["N"], p["K"] // 8) and s.shape == z.shape == (p["N"], p["K"] // 128)
    assert p["M"] % 2 == 1 and p["K"] % 128 == 0 and p["N"] % 8 == 0 and p["N"] % 32 != 0
    y = R.reference(x, qw, s, z).float()
    assert 0.7 < y.std().item() < 1.4
    assert s.float().log().std().item() > 0.2 and z.float().std().item() > 0.8
    q = R.unpack(qw)
    assert q.min().item() == 0 and q.max().item() == 15


def _wrong(x, qw, s, z, kind):
    q = R.unpack(qw).double()
    n, k = q.shape
    zz, ss = z.double().repeat_interleave(128, 1), s.double().repeat_interleave(128, 1)
    if kind == "no_zero":
        w = q * ss
    elif kind == "row_scale":
        w = (q - zz) * s.double()[:, :1]
    elif kind == "reversed":
        w = (q.reshape(n, k // 8, 8).flip(-1).reshape(n, k) - zz) * ss
    elif kind == "honest_fp32":
        w = (q - zz) * ss
    return (x.double() @ w.t()).to(torch.float16)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_tolerance_admits_honest_and_rejects_wrong(seed):
    x, qw, s, z = R.make_inputs(_workload(), seed, "cpu")
    ref, tol = R.reference(x, qw, s, z), _tol()
    assert _passes(_wrong(x, qw, s, z, "honest_fp32"), ref, tol)
    for kind in ("no_zero", "row_scale", "reversed"):
        assert not _passes(_wrong(x, qw, s, z, kind), ref, tol), kind
    for null in (torch.zeros_like(ref), torch.full_like(ref, ref.float().mean().item()), x[:, : ref.shape[1]].contiguous()):
        assert not _passes(null, ref, tol)


def test_expert_correct_under_interpreter(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    from d2k_profile import interpreter

    interpreter.apply()
    sub = _module(TASK / "expert" / "submission.py", "w4a16_expert")
    tol = _tol()
    wl = _workload()
    x, qw, s, z = R.make_inputs(wl, 1, "cpu")
    assert _passes(sub.run(x, qw, s, z), R.reference(x, qw, s, z), tol)
    x1 = x[:1].contiguous()  # M = 1: the split-K GEMV path
    assert _passes(sub.run(x1, qw, s, z), R.reference(x1, qw, s, z), tol)

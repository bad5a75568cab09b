"""fp8_gemm_blockscale: the inputs need every block scale, null and wrong-scale kernels fail smoke,
the tolerance admits the honest fp32 product rounded to bf16, and the layouts are as stated."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import torch

from d2k_spec.task import load_task

TASK = Path(__file__).resolve().parents[2] / "tasks" / "fp8_gemm_blockscale"


def _ref():
    spec = importlib.util.spec_from_file_location("fp8_ref", TASK / "reference.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _task():
    return load_task(TASK)


def _fails(out, want, tol) -> bool:
    d = (out.double() - want.double())
    elem_ok = bool((d.abs() <= tol.atol + tol.rtol * want.double().abs()).all())
    return not (elem_ok and float(d.norm() / want.double().norm()) <= tol.max_rel_l2)


def test_layouts_and_quantisation():
    ref, task = _ref(), _task()
    w = next(x for x in task.workload if x.smoke)
    a, sa, b, sb = ref.make_inputs(w, 0, "cpu")
    M, N, K = w.params["M"], w.params["N"], w.params["K"]
    assert a.dtype == b.dtype == torch.float8_e4m3fn and a.shape == (M, K) and b.shape == (N, K)
    assert sa.shape == (K // 128, M) and sa.is_contiguous() and sb.shape == (-(-N // 128), K // 128) and sb.is_contiguous()
    # every 1x128 block of A and 128x128 block of B uses the e4m3 range: amax == 448
    blocks = a.float().view(M, K // 128, 128).abs().amax(dim=2)
    assert torch.allclose(blocks, torch.full_like(blocks, 448.0))
    # neighbouring K blocks of a row really differ (scales matter along K)
    ratio = (sa[1:] / sa[:-1]).log().abs()
    assert float(ratio.median()) > 0.3


def test_null_and_wrong_scale_kernels_fail_and_honest_passes():
    ref, task = _ref(), _task()
    tol = task.tolerance["bfloat16"]
    w = next(x for x in task.workload if x.smoke)
    for seed in w.seeds:
        a, sa, b, sb = ref.make_inputs(w, seed, "cpu")
        want = ref.reference(a, sa, b, sb)
        da, db = ref.dequantized(a, sa, b, sb)
        honest = (da.double() @ db.double().t()).to(torch.bfloat16)
        assert not _fails(honest, want, tol)
        first = sa[:1].expand_as(sa).contiguous()  # only the first K block's scale per row
        wrong = {
            "zeros": torch.zeros_like(want),
            "constant": torch.full_like(want, float(want.float().mean())),
            "no scales": (a.float() @ b.float().t()).to(torch.bfloat16),
            "per-tensor scales": (a.float() @ b.float().t() * sa.mean() * sb.mean()).to(torch.bfloat16),
            "first K block scale": ref.reference(a, first, b, sb),
            "row scale of B ignored along K": ref.reference(a, sa, b, sb[:, :1].expand_as(sb).contiguous()),
        }
        for name, out in wrong.items():
            assert _fails(out, want, tol), f"seed {seed}: {name} passes"

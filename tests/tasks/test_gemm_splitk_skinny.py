"""gemm_splitk_skinny: workloads as docs/tasks.md lists them, the smoke shape is ragged against the usual
tiles, null kernels and a dropped K slice fail the tolerance, an honest fp32 kernel passes, and the
expert's split-K really combines several slices on smoke (CPU only)."""

from __future__ import annotations

from pathlib import Path

import torch

from d2k_profile.checks import tolerance_for
from d2k_profile.correctness import compare_all
from d2k_spec.inputs_check import load_reference
from d2k_spec.task import load_tasks

REPO = Path(__file__).resolve().parents[2]
TASK = load_tasks(REPO / "tasks")["gemm_splitk_skinny"]
REF = load_reference(TASK)


def test_workloads_and_smoke_shape():
    assert [w.name for w in TASK.workloads if not w.smoke] == ["m16_n4096_k14336", "m8_n8192_k28672", "m32_n2048_k16384"]
    for w in TASK.workloads:
        p = w.params
        assert p["N"] % 8 == 0 and p["K"] % 8 == 0
        assert abs(w.distribution.std - p["K"] ** -0.25) < 0.002, w.name  # unit-scale outputs
    s = TASK.smoke.params
    assert s["M"] < 16 and s["N"] % 64 and s["K"] % 64


def test_tolerance_admits_honest_and_rejects_null_and_dropped_slice():
    tol = tolerance_for(TASK, TASK.smoke)
    for seed in TASK.smoke.seeds:
        a, b = REF.make_inputs(TASK.smoke, seed, "cpu")
        want = REF.reference(a, b)
        honest = (a.double() @ b.double().t()).to(torch.bfloat16)
        assert compare_all(honest, want, tol).ok
        k = a.shape[1]
        dropped = (a[:, : 3 * k // 4].float() @ b[:, : 3 * k // 4].float().t()).to(torch.bfloat16)
        for bad in (torch.zeros_like(want), torch.full_like(want, float(want.float().mean())), dropped,
                    a[:, : want.shape[1]].clone() if a.shape[1] >= want.shape[1] else torch.ones_like(want)):
            assert not compare_all(bad, want, tol).ok


def test_expert_smoke_setting_splits_k():
    from importlib import util

    spec = util.spec_from_file_location("gsk_expert", REPO / "tasks" / "gemm_splitk_skinny" / "expert" / "submission.py")
    mod = util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    block_n, block_k, split, _, _ = mod.INTERPRETER_SETTING
    k = TASK.smoke.params["K"]
    assert split > 1 and k % block_k and triton_cdiv(k, triton_cdiv(triton_cdiv(k, block_k), split) * block_k) == split
    assert all(s[2] > 1 for s in mod.TUNED.values())


def triton_cdiv(x, y):
    return -(-x // y)

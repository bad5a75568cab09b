"""conv2d_nhwc: the statement's formula and layouts, the tolerances and the null/wrong kernels.

CPU only, smoke-sized data (plus one reduced mid-size shape for the output scale)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from d2k_profile.checks import Verdict, check_values, tolerance_for
from d2k_spec.catalogue import load_catalogue
from d2k_spec.inputs_check import load_reference
from d2k_spec.task import Workload, load_tasks

REPO = Path(__file__).resolve().parents[2]
TASK = load_tasks(REPO / "tasks", load_catalogue())["conv2d_nhwc"]
REF = load_reference(TASK)
TOL = tolerance_for(TASK, TASK.smoke)
SEEDS = TASK.smoke.seeds


def _inputs(seed):
    return REF.make_inputs(TASK.smoke, seed, "cpu")


def _loops_fp64(x, w):
    """The statement's formula, term by term, in fp64."""
    n, h, wd, c = x.shape
    k = w.shape[0]
    xd, wdb = x.double(), w.double()
    y = torch.zeros((n, h, wd, k), dtype=torch.float64)
    for r in range(3):
        for s in range(3):
            for p in range(h):
                for q in range(wd):
                    ih, iw = p + r - 1, q + s - 1
                    if 0 <= ih < h and 0 <= iw < wd:
                        y[:, p, q, :] += xd[:, ih, iw, :] @ wdb[:, r, s, :].t()
    return y


def _conv_fp32(x, w):
    return F.conv2d(x.float().permute(0, 3, 1, 2), w.float().permute(0, 3, 1, 2), padding=1).permute(0, 2, 3, 1)


def _ok(out, ref) -> bool:
    try:
        check_values((out,), (ref,), TOL, "candidate")
        return True
    except Verdict:
        return False


def test_layouts_are_plain_contiguous_nhwc_and_krsc():
    p = TASK.smoke.params
    x, w = _inputs(0)
    assert tuple(x.shape) == (p["N"], p["H"], p["W"], p["C"]) and x.is_contiguous() and x.dtype == torch.bfloat16
    assert tuple(w.shape) == (p["K"], 3, 3, p["C"]) and w.is_contiguous()
    y = REF.reference(x, w)
    assert tuple(y.shape) == (p["N"], p["H"], p["W"], p["K"]) and y.is_contiguous() and y.dtype == torch.bfloat16
    assert p["C"] % 8 == 0 and p["K"] % 8 == 0


@pytest.mark.parametrize("seed", SEEDS)
def test_reference_is_the_statement_formula(seed):
    x, w = _inputs(seed)
    exact = _loops_fp64(x, w)
    assert _ok(REF.reference(x, w), exact.to(torch.bfloat16))
    assert _ok(exact.to(torch.bfloat16), REF.reference(x, w))


@pytest.mark.parametrize("seed", SEEDS)
def test_honest_kernel_passes_and_wrong_kernels_fail(seed):
    x, w = _inputs(seed)
    ref = REF.reference(x, w)
    n, h, wd, c = x.shape
    assert _ok(_conv_fp32(x, w).to(torch.bfloat16), ref)
    wrong = {
        "zeros": torch.zeros_like(ref),
        "best constant": torch.full_like(ref, ref.float().mean().item()),
        "passthrough": x.reshape(-1)[: ref.numel()].reshape(ref.shape) if x.numel() >= ref.numel()
        else x.reshape(-1).repeat((ref.numel() + x.numel() - 1) // x.numel())[: ref.numel()].reshape(ref.shape),
        # a valid (unpadded) convolution written to the top-left corner, padding rows left at zero
        "valid conv shifted": F.pad(F.conv2d(x.float().permute(0, 3, 1, 2), w.float().permute(0, 3, 1, 2)),
                                    (0, 2, 0, 2)).permute(0, 2, 3, 1).to(torch.bfloat16),
        # the valid convolution centred (borders zero): ignores every padding tap
        "borders dropped": F.pad(F.conv2d(x.float().permute(0, 3, 1, 2), w.float().permute(0, 3, 1, 2)),
                                 (1, 1, 1, 1)).permute(0, 2, 3, 1).to(torch.bfloat16),
        # no masks: out-of-row taps wrap into the neighbouring row of the flattened image
        "padding masks dropped": _wrapped(x, w).to(torch.bfloat16),
        "taps (r, s) swapped": _conv_fp32(x, w.transpose(1, 2).contiguous()).to(torch.bfloat16),
        "filter flipped": _conv_fp32(x, w.flip(1, 2).contiguous()).to(torch.bfloat16),
        "scaled by 1.05": (_conv_fp32(x, w) * 1.05).to(torch.bfloat16),
    }
    for name, out in wrong.items():
        assert not _ok(out, ref), f"{name} passed the tolerance"


def _wrapped(x, w):
    """A kernel that computes flat pixel offsets (n*H + p + r - 1) * W + q + s - 1 with only a
    bound on the flat index: left/right neighbours wrap to the adjacent row."""
    n, h, wd, c = x.shape
    flat = x.float().reshape(n * h * wd, c)
    out = torch.zeros((n * h * wd, w.shape[0]))
    idx = torch.arange(n * h * wd)
    for r in range(3):
        for s in range(3):
            src = idx + (r - 1) * wd + (s - 1)
            ok = (src >= 0) & (src < n * h * wd)
            a = torch.zeros_like(flat)
            a[ok] = flat[src[ok]]
            out += a @ w[:, r, s, :].float().t()
    return out.reshape(n, h, wd, -1)


def test_outputs_have_unit_scale_on_a_reduced_mid_shape():
    wl = next(w for w in TASK.workloads if w.name == "n16_h28_w28_c256_k256")
    small = Workload(name="mid", params={**wl.params, "N": 1, "K": 32}, seeds=[0], distribution=wl.distribution)
    x, w = REF.make_inputs(small, 0, "cpu")
    y = REF.reference(x, w).float()
    assert 0.85 < y.std().item() < 1.1


def test_flop_and_byte_models():
    p = {"N": 8, "H": 14, "W": 14, "C": 512, "K": 512, "dtype": "bfloat16"}
    assert REF.flops(p) == 2 * 8 * 14 * 14 * 512 * 9 * 512
    assert REF.bytes_moved(p) == 2 * (8 * 14 * 14 * 512 + 512 * 9 * 512 + 8 * 14 * 14 * 512)

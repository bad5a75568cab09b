"""Comparing a submission's output with the reference's, magnitude-aware.

An element passes when ``|out - ref| <= atol + rtol * |ref|``; the whole output must also have a
relative L2 error ``||out - ref|| / ||ref||`` under ``max_rel_l2``. The second test is what stops an
all-zeros output from passing when outputs are tiny (softmax of a long row), the classic hole of
absolute tolerances. NaN/Inf must match the reference position by position.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from d2k_spec.task import Tolerance


@dataclass(frozen=True)
class Comparison:
    ok: bool
    reason: str
    max_abs_err: float
    rel_l2_err: float
    mismatched: int
    numel: int


def compare(out: object, ref: torch.Tensor, tol: Tolerance) -> Comparison:
    """Compare one output tensor against the reference tensor."""
    if not isinstance(out, torch.Tensor):
        return Comparison(False, f"expected a tensor, got {type(out).__name__}", float("inf"), float("inf"), -1, ref.numel())
    if tuple(out.shape) != tuple(ref.shape):
        return Comparison(False, f"shape {tuple(out.shape)} != expected {tuple(ref.shape)}", float("inf"), float("inf"), -1, ref.numel())
    if out.dtype != ref.dtype:
        return Comparison(False, f"dtype {out.dtype} != expected {ref.dtype}", float("inf"), float("inf"), -1, ref.numel())
    o = out.detach().to(device=ref.device, dtype=torch.float64)
    r = ref.detach().to(torch.float64)
    o_nan, r_nan, o_inf, r_inf = torch.isnan(o), torch.isnan(r), torch.isinf(o), torch.isinf(r)
    if not (torch.equal(o_nan, r_nan) and torch.equal(o_inf, r_inf) and torch.equal(o[o_inf], r[r_inf])):
        n = int(((o_nan != r_nan) | (o_inf != r_inf)).sum())
        return Comparison(False, f"NaN/Inf differ from the reference at {n} positions", float("nan"), float("nan"), n, ref.numel())
    o_bad = o_nan | o_inf
    r_bad = o_bad
    o, r = o[~o_bad], r[~r_bad]
    err = (o - r).abs()
    mismatched = int((err > tol.atol + tol.rtol * r.abs()).sum())
    max_abs = float(err.max()) if err.numel() else 0.0
    ref_norm = float(torch.linalg.vector_norm(r))
    rel_l2 = float(torch.linalg.vector_norm(o - r)) / ref_norm if ref_norm > 0 else float(torch.linalg.vector_norm(o))
    if mismatched:
        reason = f"{mismatched}/{ref.numel()} elements outside atol={tol.atol:g} rtol={tol.rtol:g} (max abs err {max_abs:.3g})"
        return Comparison(False, reason, max_abs, rel_l2, mismatched, ref.numel())
    if rel_l2 > tol.max_rel_l2:
        return Comparison(False, f"relative L2 error {rel_l2:.3g} > {tol.max_rel_l2:g}", max_abs, rel_l2, 0, ref.numel())
    return Comparison(True, "", max_abs, rel_l2, 0, ref.numel())


def as_outputs(value: object) -> tuple:
    """Normalise run()'s return value to a tuple of outputs."""
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def compare_all(out: object, ref: object, tol: Tolerance) -> Comparison:
    """Compare every output (tuples in order); the first failure is reported."""
    outs, refs = as_outputs(out), as_outputs(ref)
    if len(outs) != len(refs):
        return Comparison(False, f"returned {len(outs)} outputs, expected {len(refs)}", float("inf"), float("inf"), -1, 0)
    worst = None
    for i, (o, r) in enumerate(zip(outs, refs)):
        c = compare(o, r, tol)
        if not c.ok:
            return Comparison(False, f"output {i}: {c.reason}" if len(refs) > 1 else c.reason, c.max_abs_err, c.rel_l2_err, c.mismatched, c.numel)
        worst = c if worst is None or c.rel_l2_err > worst.rel_l2_err else worst
    return worst or Comparison(True, "", 0.0, 0.0, 0, 0)

"""Null kernels: outputs that do no work. A workload that one of them passes is too weak.

KernelBench's zeros-kernel passed 4 of 60 problems because outputs were tiny and the tolerance
absolute. Every workload is therefore checked against three nulls, with the same comparison as real
submissions: all zeros, the best constant, and returning an input unchanged (where an input has the
output's shape and dtype).

The best constant of an output with many elements is the reference's own mean: a kernel that writes
one value everywhere. A one-element output (a sum, a mean loss) is different: the mean of the
reference output *is* the answer, so that "constant" would flag every scalar workload. What a
kernel that does no work can return for a scalar is a value fixed before it sees the inputs, e.g.
the output's expectation under the input distribution, hard-coded. The scalar constant null is
therefore the one value that best fits the reference outputs of *all* the workload's seeds at once
(the middle of the intersection of the values each seed accepts, else their mean), and it passes
only if it passes every seed. A scalar workload is sound when its inputs make the true value vary
between seeds by more than the tolerance. Without the other seeds' references no scalar constant
null is built (one seed alone cannot tell a constant from the answer).
"""

from __future__ import annotations

import math

import torch

from d2k_spec.task import Tolerance

from .correctness import as_outputs, compare_all


def _scalar(r: object) -> bool:
    return isinstance(r, torch.Tensor) and r.numel() == 1 and r.is_floating_point()


def has_scalar_output(reference_out: object) -> bool:
    """Whether some output has one element (its constant null needs every seed's reference)."""
    return any(_scalar(r) for r in as_outputs(reference_out))


def best_scalar_constant(values: list[float], tol: Tolerance | None) -> float:
    """The constant closest to passing the comparison against every value in ``values``: the
    middle of the intersection of the intervals each value accepts (``|c - v| <= atol + rtol|v|``
    and ``|c - v| <= max_rel_l2 |v|``), or their mean when the intervals do not meet (then no
    constant passes them all)."""
    finite = [v for v in values if math.isfinite(v)]
    if not finite:
        return 0.0
    mean = sum(finite) / len(finite)
    if tol is None:
        return mean
    lo, hi = -math.inf, math.inf
    for v in finite:
        r = min(tol.atol + tol.rtol * abs(v), tol.max_rel_l2 * abs(v)) if v != 0 else min(tol.atol, tol.max_rel_l2)
        lo, hi = max(lo, v - r), min(hi, v + r)
    return (lo + hi) / 2 if lo <= hi else mean


def null_outputs(inputs: tuple, reference_out: object, seed_refs: tuple = (), tol: Tolerance | None = None) -> dict[str, tuple]:
    """The null kernels' outputs for one call, by name (passthrough only where shapes allow).

    ``seed_refs``: the reference outputs of the workload's other seeds; a one-element output's
    constant is chosen over all of them (module docstring) and is left out without them."""
    refs = as_outputs(reference_out)
    others = [as_outputs(o) for o in seed_refs]
    nulls: dict[str, tuple] = {"zeros": tuple(torch.zeros_like(r) for r in refs)}
    constant = []
    for i, r in enumerate(refs):
        if _scalar(r):
            if not others:
                constant = None
                break
            values = [float(r.double().reshape(()))] + [float(o[i].double().reshape(())) for o in others]
            constant.append(torch.full_like(r, best_scalar_constant(values, tol)))
        else:
            constant.append(torch.full_like(r, float(r.double().nan_to_num().mean()) if r.is_floating_point() else 0))
    if constant is not None:
        nulls["constant"] = tuple(constant)
    passthrough = []
    for r in refs:
        same = [x for x in inputs if isinstance(x, torch.Tensor) and x.shape == r.shape and x.dtype == r.dtype]
        if not same:
            break
        passthrough.append(same[0])
    else:
        nulls["passthrough"] = tuple(passthrough)
    return nulls


def passing_nulls(inputs: tuple, reference_out: object, tol: Tolerance, seed_refs: tuple = ()) -> list[str]:
    """Names of the null kernels that pass the comparison (empty for a sound workload).

    Every null is compared with ``reference_out`` (the first seed's); the constant null of a
    workload with a one-element output must also pass every reference in ``seed_refs``, since a
    kernel returning it would be checked on every seed."""
    refs = as_outputs(reference_out)
    wrap = (lambda outs: outs) if len(refs) > 1 else (lambda outs: outs[0])
    scalar = has_scalar_output(reference_out)
    passing = []
    for name, outs in null_outputs(inputs, reference_out, seed_refs, tol).items():
        against = [reference_out] + (list(seed_refs) if scalar and name == "constant" else [])
        if all(compare_all(wrap(outs), ref, tol).ok for ref in against):
            passing.append(name)
    return passing

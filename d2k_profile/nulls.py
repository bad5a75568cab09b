"""Null kernels: outputs that do no work. A workload that one of them passes is too weak.

KernelBench's zeros-kernel passed 4 of 60 problems because outputs were tiny and the tolerance
absolute. Every workload is therefore checked against three nulls, with the same comparison as real
submissions: all zeros, the best constant (the reference's mean), and returning an input unchanged
(where an input has the output's shape and dtype).
"""

from __future__ import annotations

import torch

from d2k_spec.task import Tolerance

from .correctness import as_outputs, compare_all


def null_outputs(inputs: tuple, reference_out: object) -> dict[str, tuple]:
    """The null kernels' outputs for one call, by name (passthrough only where shapes allow)."""
    refs = as_outputs(reference_out)
    nulls: dict[str, tuple] = {
        "zeros": tuple(torch.zeros_like(r) for r in refs),
        "constant": tuple(torch.full_like(r, float(r.double().nan_to_num().mean()) if r.is_floating_point() else 0) for r in refs),
    }
    passthrough = []
    for r in refs:
        same = [x for x in inputs if isinstance(x, torch.Tensor) and x.shape == r.shape and x.dtype == r.dtype]
        if not same:
            break
        passthrough.append(same[0])
    else:
        nulls["passthrough"] = tuple(passthrough)
    return nulls


def passing_nulls(inputs: tuple, reference_out: object, tol: Tolerance) -> list[str]:
    """Names of the null kernels that pass the comparison (empty for a sound workload)."""
    refs = as_outputs(reference_out)
    wrap = (lambda outs: outs) if len(refs) > 1 else (lambda outs: outs[0])
    return [name for name, outs in null_outputs(inputs, reference_out).items() if compare_all(wrap(outs), reference_out, tol).ok]

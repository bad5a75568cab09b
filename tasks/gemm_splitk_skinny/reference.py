"""PyTorch reference for ``gemm_splitk_skinny``: C = A @ B^T with a tiny M (bf16, fp32 accumulation).

A is [M, K] with M <= 32 (a decode-time batch of activations), B is [N, K], the way a
``torch.nn.Linear`` stores its weight, so both operands are K-contiguous. The reference is cuBLAS
through ``torch.matmul`` and is also the expert baseline (``reference_is_expert = true``). These
shapes are bound by reading B once from DRAM (117-470 MB, far above the 60 MB L2): ``bytes_moved``
is what a roofline fraction is measured against.
"""

from __future__ import annotations

import torch

from d2k_spec.sampling import generator, sample, torch_dtype
from d2k_spec.task import Workload


def reference(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """C[M, N] = A[M, K] @ B[N, K]^T in the inputs' dtype (cuBLAS accumulates bf16 in fp32)."""
    return torch.matmul(a, b.t())


def make_inputs(workload: Workload, seed: int, device: str | torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """A [M, K] and B [N, K], contiguous, drawn from the workload's distribution (A first, then B,
    from one generator), so a (workload, seed) pair always gives the same inputs on a device."""
    p = workload.params
    dtype = torch_dtype(str(p.get("dtype", "bfloat16")))
    gen = generator(seed, device)
    a = sample((int(p["M"]), int(p["K"])), dtype, workload.distribution, gen, device)
    b = sample((int(p["N"]), int(p["K"])), dtype, workload.distribution, gen, device)
    return a, b


def flops(params: dict) -> float:
    """One multiply and one add per (m, n, k) triple."""
    return 2.0 * params["M"] * params["N"] * params["K"]


def bytes_moved(params: dict) -> float:
    """Fewest DRAM bytes: A and B read once, C written once (2-byte elements). B dominates:
    N*K*2 is 117, 470 and 67 MB on the timed workloads, A and C are under 1 MB."""
    elem = torch_dtype(str(params.get("dtype", "bfloat16"))).itemsize
    m, n, k = params["M"], params["N"], params["K"]
    return float(elem * (m * k + n * k + m * n))

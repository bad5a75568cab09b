"""Drawing workload inputs (imports torch: used by ``reference.py`` files and the profiler only).

Tasks call :func:`sample` from ``make_inputs`` so that every task draws from the distributions that
``task.toml`` names in the same way, on the target device, from an explicit seed.
"""

from __future__ import annotations

import torch

from .task import Distribution, Workload

DTYPE = {
    "float32": torch.float32,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "int8": torch.int8,
    "int32": torch.int32,
    "int64": torch.int64,
    "uint8": torch.uint8,
}


def torch_dtype(name: str) -> torch.dtype:
    return DTYPE[name] if name in DTYPE else getattr(torch, name)


def generator(seed: int, device: str | torch.device) -> torch.Generator | None:
    """A seeded generator on ``device``; None on the ``meta`` device, where nothing is drawn (the
    validator builds every workload there to check shapes without allocating gigabytes)."""
    if torch.device(device).type == "meta":
        return None
    return torch.Generator(device=device).manual_seed(seed)


def sample(
    shape: tuple[int, ...],
    dtype: str | torch.dtype,
    dist: Distribution,
    gen: torch.Generator | None,
    device: str | torch.device,
) -> torch.Tensor:
    """A tensor of ``shape`` drawn from ``dist`` (in fp32, then cast to ``dtype``)."""
    dtype = torch_dtype(dtype) if isinstance(dtype, str) else dtype
    if gen is None or torch.device(device).type == "meta":
        return torch.empty(shape, dtype=dtype, device="meta")
    if dist.kind == "randint":
        return torch.randint(int(dist.low), int(dist.high), shape, generator=gen, device=device).to(dtype)
    if dist.kind == "uniform":
        x = torch.rand(shape, generator=gen, device=device, dtype=torch.float32)
        x = x * (dist.high - dist.low) + dist.low
    elif dist.kind == "powerlaw":
        u = torch.rand(shape, generator=gen, device=device, dtype=torch.float32).clamp_min_(1e-7)
        sign = torch.randint(0, 2, shape, generator=gen, device=device).float() * 2 - 1
        x = sign * (u.pow(-1.0 / dist.alpha) - 1.0) * dist.std
    else:
        x = torch.randn(shape, generator=gen, device=device, dtype=torch.float32) * dist.std + dist.mean
    return x.to(dtype)


def workload_dtype(workload: Workload, default: str = "bfloat16") -> torch.dtype:
    return torch_dtype(str(workload.params.get("dtype", default)))

"""PyTorch reference for ``conv2d_nhwc``: 3x3 convolution, stride 1, padding 1, no bias, NHWC.

x is a plain contiguous [N, H, W, C] tensor, w a plain contiguous [K, 3, 3, C] tensor (KRSC) and
the result a new contiguous [N, H, W, K] tensor, all bf16. The reference is cuDNN through
``F.conv2d``: ``x.permute(0, 3, 1, 2)`` is an [N, C, H, W]-shaped view with channels_last strides
(no copy) and ``w.permute(0, 3, 1, 2)`` a [K, C, 3, 3] channels_last view of the filter (no
copy), so cuDNN runs its NHWC kernels on the inputs as they lie. Its output is channels_last, so
``permute(0, 2, 3, 1)`` gives the contiguous NHWC tensor and the final ``.contiguous()`` is a
no-op. The timed cost of the reference is therefore cuDNN's convolution alone (plus whatever
workspace/transform kernels cuDNN itself chooses to launch), with no layout conversion of ours.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from d2k_spec.sampling import generator, sample, torch_dtype
from d2k_spec.task import Workload

R = S = 3


def reference(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """y[n, h, w, k] = sum_{r, s, c} x[n, h + r - 1, w + s - 1, c] * w[k, r, s, c] (zero padding)."""
    xv = x.permute(0, 3, 1, 2)  # [N, C, H, W] view, channels_last strides
    wv = w.permute(0, 3, 1, 2)  # [K, C, 3, 3] view, channels_last strides
    y = F.conv2d(xv, wv, bias=None, stride=1, padding=1)
    return y.permute(0, 2, 3, 1).contiguous()


def make_inputs(workload: Workload, seed: int, device: str | torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """x [N, H, W, C] and w [K, 3, 3, C], contiguous, from one generator (x first)."""
    p = workload.params
    dtype = torch_dtype(str(p.get("dtype", "bfloat16")))
    gen = generator(seed, device)
    x = sample((int(p["N"]), int(p["H"]), int(p["W"]), int(p["C"])), dtype, workload.distribution, gen, device)
    w = sample((int(p["K"]), R, S, int(p["C"])), dtype, workload.distribution, gen, device)
    return x, w


def flops(params: dict) -> float:
    """One multiply and one add per (output element, tap, input channel), padding taps included."""
    return 2.0 * params["N"] * params["H"] * params["W"] * params["K"] * R * S * params["C"]


def bytes_moved(params: dict) -> float:
    """Fewest DRAM bytes: x and w read once, y written once (2-byte bf16 elements)."""
    elem = torch_dtype(str(params.get("dtype", "bfloat16"))).itemsize
    n, h, w, c, k = params["N"], params["H"], params["W"], params["C"], params["K"]
    return float(elem * (n * h * w * c + k * R * S * c + n * h * w * k))

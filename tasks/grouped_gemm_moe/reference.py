"""PyTorch reference for ``grouped_gemm_moe``: one GEMM per expert over its slice of the rows.

x [T, K] holds the tokens already grouped by expert (expert 0's rows first, then expert 1's, ...),
w [E, N, K] one Linear-layout weight per expert, group_sizes [E] (int32, on the device) how many
rows each expert owns; the sizes sum to T and may be 0. y[T, N]: the rows of expert e are
x_e @ w[e]^T. The baseline reads the sizes on the host (one device sync, needed to slice) and
launches one cuBLAS GEMM per non-empty expert.

Group sizes (``group_sizes_for``), drawn on the CPU from the seed so that every device gets the
same ones:
  * ``split = "multinomial"``: T rows thrown uniformly at random over the experts (near-uniform
    sizes, every seed different); ``empty = n`` first makes n randomly chosen experts empty.
  * ``split = "zipf"``: a power law. The expert of popularity rank r gets T * r^-s / H rows
    (H = sum of r^-s over the E ranks), rounded down, the leftover rows going to the top rank;
    ranks are assigned to experts by a random permutation from the seed. The sorted
    profile is fixed by (T, E, s), so the number of empty experts (and hence the weight traffic
    in ``bytes_moved``) is exact; which experts are hot and which empty changes with the seed.
"""

from __future__ import annotations

import torch

from d2k_spec.sampling import generator, sample, torch_dtype
from d2k_spec.task import Workload


def reference(x: torch.Tensor, w: torch.Tensor, group_sizes: torch.Tensor) -> torch.Tensor:
    """A loop of torch.matmul (cuBLAS) over the experts' row slices."""
    y = torch.empty((x.shape[0], w.shape[1]), device=x.device, dtype=x.dtype)
    start = 0
    for e, rows in enumerate(group_sizes.tolist()):
        if rows:
            torch.matmul(x[start:start + rows], w[e].t(), out=y[start:start + rows])
        start += rows
    return y


def zipf_profile(T: int, E: int, s: float) -> list[int]:
    """Rows per popularity rank (descending, sums to T): floor(T * r^-s / H), the rows the
    rounding leaves over going to the most popular rank (a rank whose share is below one row
    gets none: those are the empty experts)."""
    weights = [r ** -s for r in range(1, E + 1)]
    total = sum(weights)
    rows = [int(T * wt / total) for wt in weights]
    rows[0] += T - sum(rows)
    return rows


def group_sizes_for(params: dict, seed: int) -> torch.Tensor:
    """int32 [E] rows per expert (sum T), from the workload's split and the seed (CPU)."""
    T, E = int(params["T"]), int(params["E"])
    gen = torch.Generator().manual_seed(seed * 7919 + 17)
    split = str(params.get("split", "multinomial"))
    if split == "zipf":
        profile = torch.tensor(zipf_profile(T, E, float(params["zipf_s"])), dtype=torch.int32)
        sizes = torch.empty(E, dtype=torch.int32)
        sizes[torch.randperm(E, generator=gen)] = profile
        return sizes
    if split != "multinomial":
        raise ValueError(f"unknown split {split!r}")
    live = torch.ones(E, dtype=torch.float64)
    n_empty = int(params.get("empty", 0))
    if n_empty:
        live[torch.randperm(E, generator=gen)[:n_empty]] = 0.0
    picks = torch.multinomial(live, T, replacement=True, generator=gen)
    return torch.bincount(picks, minlength=E).to(torch.int32)


def make_inputs(workload: Workload, seed: int, device: str | torch.device):
    """x [T, K], w [E, N, K] (the workload's dtype, contiguous) and group_sizes [E] (int32)."""
    p = workload.params
    T, E, N, K = (int(p[k]) for k in ("T", "E", "N", "K"))
    dtype = torch_dtype(str(p.get("dtype", "bfloat16")))
    gen = generator(seed, device)
    x = sample((T, K), dtype, workload.distribution, gen, device)
    w = sample((E, N, K), dtype, workload.distribution, gen, device)
    if gen is None:
        return x, w, torch.empty((E,), dtype=torch.int32, device="meta")
    return x, w, group_sizes_for(p, seed).to(device)


def flops(params: dict) -> float:
    """2 T N K: every row meets exactly one expert's weight."""
    return 2.0 * params["T"] * params["N"] * params["K"]


def nonempty_experts(params: dict) -> int:
    """Experts with at least one row: exact for the zipf split (its profile is fixed), E for the
    multinomial split (at ~T/E >= 256 rows per expert an empty one has probability < 1e-100)."""
    if str(params.get("split", "multinomial")) == "zipf":
        return sum(1 for r in zipf_profile(int(params["T"]), int(params["E"]), float(params["zipf_s"])) if r)
    return int(params["E"]) - int(params.get("empty", 0))


def bytes_moved(params: dict) -> float:
    """Fewest DRAM bytes: x read once, the weights of the non-empty experts read once (an empty
    expert's weight need not be touched), the sizes read, y written once."""
    elem = torch_dtype(str(params.get("dtype", "bfloat16"))).itemsize
    T, N, K, E = (int(params[k]) for k in ("T", "N", "K", "E"))
    return float(elem * (T * K + nonempty_experts(params) * N * K + T * N) + 4 * E)

"""grouped_gemm_moe: the group sizes are what the statement says (near-uniform multinomial splits,
a real power law with empty experts on the skewed workload, seeded and varying by seed, always
summing to T), the byte model counts exactly the non-empty experts, and the tolerance admits an
honest fp32-accumulating kernel while rejecting null kernels and kernels that ignore the sizes.
CPU only, smoke-sized GEMMs."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from d2k_profile.checks import Verdict, check_values, tolerance_for
from d2k_spec.catalogue import load_catalogue
from d2k_spec.inputs_check import load_reference
from d2k_spec.task import load_task

REPO = Path(__file__).resolve().parents[2]
TASK = load_task(REPO / "tasks" / "grouped_gemm_moe", load_catalogue())
REF = load_reference(TASK)
NAMES = ["e8_t8192_k4096_n14336", "e64_t16384_k2048_n1408", "e128_t4096_k2048_n768_skewed"]


def _sizes(name: str, seed: int) -> torch.Tensor:
    return REF.group_sizes_for(dict(TASK.workload_named(name).params), seed)


def test_workloads_are_the_issue_s():
    assert [w.name for w in TASK.workloads] == NAMES
    for w in TASK.workloads:
        p = w.params
        assert f"e{p['E']}_t{p['T']}_k{p['K']}_n{p['N']}" in w.name


@pytest.mark.parametrize("name", NAMES + ["smoke"])
def test_sizes_sum_to_T_are_seeded_and_vary_by_seed(name):
    w = TASK.workload_named(name)
    per_seed = [_sizes(name, s) for s in w.seeds]
    for s, sizes in zip(w.seeds, per_seed):
        assert sizes.dtype == torch.int32 and sizes.shape == (w.params["E"],)
        assert int(sizes.sum()) == w.params["T"] and int(sizes.min()) >= 0
        assert torch.equal(sizes, _sizes(name, s))  # deterministic from the seed
    assert not torch.equal(per_seed[0], per_seed[1]) and not torch.equal(per_seed[1], per_seed[2])


def test_skewed_workload_is_a_power_law_with_empty_experts():
    for seed in TASK.workload_named(NAMES[2]).seeds:
        sizes = _sizes(NAMES[2], seed)
        ranked = sizes.sort(descending=True).values
        assert int((sizes == 0).sum()) >= 10  # 18 of 128 experts own no rows
        assert int(ranked[:4].sum()) >= 0.7 * 4096  # the four hottest hold ~75 % of the rows
        assert int(ranked[0]) >= 1800 and int((sizes <= 2).sum()) >= 60
        # a power law: the rank-r size falls like r^-1.6 (log-log slope over ranks 1..64)
        r = torch.arange(1, 65, dtype=torch.float64)
        slope = torch.linalg.lstsq(torch.stack([r.log(), torch.ones_like(r)], 1)[1:],
                                   ranked[1:64].double().clamp_min(1).log()[:, None]).solution[0, 0]
        assert -2.0 < float(slope) < -1.3
    hot = [set(_sizes(NAMES[2], s).topk(4).indices.tolist()) for s in (0, 1, 2)]
    assert hot[0] != hot[1] != hot[2]  # which experts are hot changes with the seed


@pytest.mark.parametrize("name", NAMES[:2])
def test_uniform_workloads_are_near_uniform_and_full(name):
    p = TASK.workload_named(name).params
    for seed in (0, 1, 2):
        sizes = _sizes(name, seed).double()
        mean = p["T"] / p["E"]
        assert float(sizes.min()) > 0.75 * mean and float(sizes.max()) < 1.25 * mean
        assert not bool((sizes == mean).all())  # not an equal split: a kernel may not assume T / E rows each


def test_smoke_is_ragged_with_an_empty_expert():
    for seed in TASK.smoke.seeds:
        sizes = _sizes("smoke", seed)
        assert int((sizes == 0).sum()) == 1
        assert any(int(s) % 8 for s in sizes if s)


def test_bytes_model_counts_the_non_empty_experts():
    for name in NAMES:
        p = dict(TASK.workload_named(name).params)
        for seed in TASK.workload_named(name).seeds:
            assert REF.nonempty_experts(p) == int((_sizes(name, seed) > 0).sum())
    p = dict(TASK.workload_named(NAMES[2]).params)
    assert REF.bytes_moved(p) == 2 * (4096 * 2048 + 110 * 768 * 2048 + 4096 * 768) + 4 * 128


def _honest(x, w, sizes, expert_of=lambda e, E: e, split=None):
    """fp32-accumulating grouped GEMM on the CPU, optionally with the wrong expert or sizes."""
    y = torch.empty((x.shape[0], w.shape[1]), dtype=x.dtype)
    start = 0
    for e, rows in enumerate(sizes.tolist() if split is None else split):
        y[start:start + rows] = (x[start:start + rows].float() @ w[expert_of(e, w.shape[0])].float().t()).to(x.dtype)
        start += rows
    return y


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_tolerance_admits_honest_and_rejects_null_and_size_blind_kernels(seed):
    x, w, sizes = REF.make_inputs(TASK.smoke, seed, "cpu")
    want = REF.reference(x, w, sizes)
    tol = tolerance_for(TASK, TASK.smoke)
    assert check_values((_honest(x, w, sizes),), (want,), tol, "honest").ok
    T, E = x.shape[0], w.shape[0]
    equal = [T // E + (1 if e < T % E else 0) for e in range(E)]
    bad = {
        "zeros": torch.zeros_like(want),
        "constant": torch.full_like(want, float(want.float().mean())),
        "wrong expert": _honest(x, w, sizes, expert_of=lambda e, n: (e + 1) % n),
        "equal split assumed": _honest(x, w, sizes, split=equal),
    }
    for name, got in bad.items():
        with pytest.raises(Verdict):
            check_values((got,), (want,), tol, name)
    with pytest.raises(Verdict):  # passthrough of x: wrong shape
        check_values((x.clone(),), (want,), tol, "passthrough")


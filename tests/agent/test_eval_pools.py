"""The final evaluations have a pool of their own: agent load never disturbs their timings.

Without GPUs reserved for them, a (run, task)'s final profile is queued and runs only after every
agent loop of the invocation has ended (checked end to end, with the resume of a queued profile,
in test_loop_e2e.py: it shares that test's one agent run). With reserved GPUs no agent uses,
evaluations run as tasks finish; with Ray they go to the cluster."""

from __future__ import annotations

from d2k_agent import evaluation


def test_reserved_gpus_run_evaluations_at_once_and_shared_ones_wait():
    own = evaluation.eval_pool(["0", "1"], ["2", "3"], True, jobs=4)
    assert not own.deferred and own.pool.size == 2 and own.profiler_flags() == ["--gpus", "0"]
    for eval_gpus in (None, [], ["1", "2"]):  # none reserved, or one of them is an agent's
        shared = evaluation.eval_pool(["0", "1"], eval_gpus, True, jobs=4)
        assert shared.deferred, eval_gpus
    ray = evaluation.eval_pool(["0"], None, False, jobs=3, backend="ray", ray_address="10.0.0.1:6379")
    assert not ray.deferred and ray.has_gpu and ray.pool.size == 3
    assert ray.profiler_flags() == ["--backend", "ray", "--ray-address", "10.0.0.1:6379"]


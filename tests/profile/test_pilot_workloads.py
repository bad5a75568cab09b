"""No workload of the benchmark's tasks may be passed by a null kernel.

Run on the CPU with each workload's row/batch dimensions cut down: parameters that are ever the
*last* dimension of a matrix input (row length, K) are kept, since they set the output magnitudes
that decide whether zeros slip through; the other dimensions of matrix inputs are capped at 8 rows,
and a dimension that only vectors have (reduce_sum's N: 2^28 elements would be 1 GB here) at 2^20,
enough elements for a sum's spread between seeds to be what it is at full size. Every seed's
reference is computed, so the constant null of a one-element output (d2k_profile/nulls.py) is
the one a kernel would need to pass on all of them.
"""

import dataclasses

import pytest

from d2k_profile.nulls import passing_nulls
from d2k_profile.checks import clone_all, tolerance_for
from d2k_spec.inputs_check import load_reference
from d2k_spec.task import load_tasks

TASKS = load_tasks()
CASES = [(t, w) for t in TASKS.values() for w in t.workload]  # the smoke workload too


VECTOR_CAP = 1 << 20


def shrunk(task, wl):
    shapes = [s.shape for s in task.interface.inputs if s.shape]
    kept = {sh[-1] for sh in shapes if len(sh) >= 2}
    in_matrix = {k for sh in shapes if len(sh) >= 2 for k in sh}
    in_vector = {k for sh in shapes if len(sh) == 1 for k in sh}

    def cut(k, v):
        if not isinstance(v, int) or isinstance(v, bool) or k in kept:
            return v
        return min(v, 8) if k in in_matrix else min(v, VECTOR_CAP) if k in in_vector else v

    return dataclasses.replace(wl, params={k: cut(k, v) for k, v in wl.params.items()})


@pytest.mark.parametrize("task,wl", CASES, ids=[f"{t.id}/{w.name}" for t, w in CASES])
def test_no_null_kernel_passes(task, wl):
    ref = load_reference(task)
    small = shrunk(task, wl)
    inputs = tuple(ref.make_inputs(small, wl.seeds[0], "cpu"))
    out = ref.reference(*clone_all(inputs))
    others = tuple(ref.reference(*ref.make_inputs(small, seed, "cpu")) for seed in wl.seeds[1:])
    assert passing_nulls(inputs, out, tolerance_for(task, wl), others) == []

"""No workload of the benchmark's tasks may be passed by a null kernel.

Run on the CPU with each workload's row/batch dimensions cut down: parameters that are ever the
*last* dimension of an input (row length, K) are kept, since they set the output magnitudes that
decide whether zeros slip through; the others are capped at 8 rows.
"""

import dataclasses

import pytest

from d2k_profile.nulls import passing_nulls
from d2k_profile.checks import tolerance_for
from d2k_spec.inputs_check import load_reference
from d2k_spec.task import load_tasks

TASKS = load_tasks()
CASES = [(t, w) for t in TASKS.values() for w in t.workload]  # the smoke workload too


def shrunk(task, wl):
    kept = {s.shape[-1] for s in task.interface.inputs if s.shape}
    params = {k: (min(v, 8) if isinstance(v, int) and not isinstance(v, bool) and k not in kept and any(k in s.shape for s in task.interface.inputs) else v)
              for k, v in wl.params.items()}
    return dataclasses.replace(wl, params=params)


@pytest.mark.parametrize("task,wl", CASES, ids=[f"{t.id}/{w.name}" for t, w in CASES])
def test_no_null_kernel_passes(task, wl):
    ref = load_reference(task)
    small = shrunk(task, wl)
    inputs = tuple(ref.make_inputs(small, wl.seeds[0], "cpu"))
    out = ref.reference(*[x.clone() for x in inputs])
    assert passing_nulls(inputs, out, tolerance_for(task, wl)) == []

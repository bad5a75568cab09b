"""No workload of the benchmark's tasks may be passed by a null kernel.

Run on the CPU with each workload's row/batch dimensions cut down: parameters that are ever the
*last* dimension of an input (row length, K) are kept, since they set the output magnitudes that
decide whether zeros slip through; the others are capped at 8 rows.
"""

import dataclasses
import importlib.util

import pytest

from d2k_profile.nulls import passing_nulls
from d2k_profile.worker import tolerance_for
from d2k_spec.task import default_tasks_root, load_tasks

TASKS = load_tasks() if default_tasks_root().is_dir() else {}
CASES = [(t, w) for t in TASKS.values() for w in t.workloads]


def shrunk(task, wl):
    kept = {s.shape[-1] for s in task.interface.inputs if s.shape}
    params = {k: (min(v, 8) if isinstance(v, int) and not isinstance(v, bool) and k not in kept and any(k in s.shape for s in task.interface.inputs) else v)
              for k, v in wl.params.items()}
    return dataclasses.replace(wl, params=params)


@pytest.mark.skipif(not CASES, reason="no tasks/ in this checkout")
@pytest.mark.parametrize("task,wl", CASES, ids=[f"{t.id}/{w.name}" for t, w in CASES])
def test_no_null_kernel_passes(task, wl):
    spec = importlib.util.spec_from_file_location(f"ref_{task.id}", task.reference_path)
    ref = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ref)
    small = shrunk(task, wl)
    inputs = tuple(ref.make_inputs(small, wl.seeds[0], "cpu"))
    out = ref.reference(*[x.clone() for x in inputs])
    assert passing_nulls(inputs, out, tolerance_for(task, wl)) == []

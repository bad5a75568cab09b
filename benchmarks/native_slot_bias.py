"""Does the native timed call itself favour one implementation slot? (a GPU diagnostic)

On the H200 the softmax reference timed against itself on its 20 us workload came out 0.6-1.5 %
faster in the submission's slot than in the reference's, in five runs, while CUPTI kernel times
were equal (docs/h200-results.md). The two slots differ in the judge's harness in two ways: the
submission's outputs are escrowed (copied into the judge's buffer after the end event), and the
slot index. This script binds the same callable (the softmax reference) in two slots of the
native loop in this one process and times them in rotating rounds, as the judge does, under
conditions that separate the causes (the last two not yet run on a GPU):

  same        no escrow in either slot, the same input set (any gap is the slot itself)
  escrow1     slot 1 escrowed (as the harness does for a submission)
  escrow0     slot 0 escrowed instead (a real escrow effect follows the flag, not the slot)
  own_inputs  no escrow, slot 1 reads its own copy of the inputs
  both        both slots escrowed
  escrow1_rev escrow1 with the other slot opening the even rounds

    python benchmarks/native_slot_bias.py [ROUNDS [BLOCKS]]    # one line per condition and block

With BLOCKS > 1 the whole list of conditions is run BLOCKS times, each block starting one
condition later than the one before, so that a condition's place in the sequence (the GPU's
clocks and temperature drift over a run) is not confounded with the condition; a last line per
condition gives the median of its blocks' ratios.

Run on the H200 (2026-12-04, 400 rounds, one block): same 0.998, escrow1 1.010, escrow0 0.998,
own_inputs 1.000, both 1.002, escrow1_rev 1.002. escrow1 and escrow1_rev are the same sequence
shifted by one round, so the 1 % of escrow1 is not the escrow itself.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 400
BLOCKS = int(sys.argv[2]) if len(sys.argv) > 2 else 1
HOLD = 200_000
TIMED, ESCROW = 1, 2


def time_condition(mod, binding, slots, reverse: bool):
    """Median event time (us) of each slot over ROUNDS rotating rounds, or the error text."""
    first = (1, 0) if reverse else (0, 1)  # which slot opens the even rounds
    mod.bind(*binding)
    for s in (0, 1):
        for _ in range(5):
            mod.call_local(s, slots[s][1], 0, 0)
    times: dict[int, list[float]] = {0: [], 1: []}
    for r in range(ROUNDS):
        for s in (first if r % 2 == 0 else first[::-1]):
            flags, iset = slots[s]
            status, _f, ev_ms, _host, text = mod.call_local(s, iset, TIMED | flags, HOLD)
            if status != 0:
                return text
            times[s].append(ev_ms * 1e3)
    return statistics.median(times[0]), statistics.median(times[1])


def softmax_in_native_loop():
    """(reference callable, its inputs, its first output, the expected-output spec, the native
    loop set up with d2k-profile's read flush) on softmax m8192_n1024, the 20 us workload."""
    from d2k_profile.loader import load_module, reference_entry
    from d2k_spec.task import default_tasks_root, load_task
    from profile_ncu_compare import native_setup

    task = load_task(default_tasks_root() / "softmax")
    ref_mod = load_module(task.reference_path, "ref_softmax")
    fn = reference_entry(ref_mod)
    wl = next(w for w in task.workloads if w.name == "m8192_n1024")
    inputs = tuple(ref_mod.make_inputs(wl, 0, "cuda"))
    out = fn(inputs)
    expect = ((out.dtype, tuple(out.shape), out.numel() * out.element_size()),)
    mod = native_setup()
    mod.set_flush_mode(3)  # the read sweep, d2k-profile's default
    return fn, inputs, out, expect, mod


def main() -> int:
    import torch

    fn, inputs, out, expect, mod = softmax_in_native_loop()
    own = tuple(x.clone() if isinstance(x, torch.Tensor) else x for x in inputs)
    escrow = torch.empty_like(out)
    conditions = {"same": ((0, 0), (0, 0)), "escrow1": ((0, 0), (ESCROW, 0)),
                  "escrow0": ((ESCROW, 0), (0, 0)), "own_inputs": ((0, 0), (0, 1)), "both": ((ESCROW, 0), (ESCROW, 0)),
                  "escrow1_rev": ((0, 0), (ESCROW, 0))}
    binding = ((fn, fn), (inputs, own), (((escrow.data_ptr(), escrow.numel() * escrow.element_size()),),), expect)
    names = list(conditions)
    ratios: dict[str, list[float]] = {n: [] for n in names}
    for block in range(BLOCKS):
        for name in names[block % len(names):] + names[:block % len(names)]:
            medians = time_condition(mod, binding, conditions[name], reverse=name.endswith("_rev"))
            if isinstance(medians, str):
                print(json.dumps({"condition": name, "error": medians}))
                return 1
            m0, m1 = medians
            ratios[name].append(m0 / m1)
            print(json.dumps({"condition": name, "block": block, "slot0_us": round(m0, 3), "slot1_us": round(m1, 3),
                              "slot0_over_slot1": round(m0 / m1, 4), "rounds": ROUNDS}), flush=True)
    if BLOCKS > 1:
        for name in names:
            print(json.dumps({"condition": name, "median_ratio_over_blocks": round(statistics.median(ratios[name]), 4),
                              "blocks": [round(r, 4) for r in ratios[name]]}), flush=True)
    torch.cuda.synchronize()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

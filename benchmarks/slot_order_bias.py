"""Which call follows which: the per-call view of the native loop's slot bias (a GPU diagnostic).

``native_slot_bias.py`` found that the softmax reference timed against itself on its 20 us
workload is 1.2-1.5 % slower in slot 0 when only slot 1's outputs are escrowed, and not when
slot 1 opens the even rounds instead. In the profiler's own self-checks (every implementation
escrowed, each into its own set) the reference's samples split by round: in the rounds where it
comes second, after the submission, it is ~0.5 us slower; where it comes first it matches the
submission. Here every timed call is kept with the slot before it, its round's parity and the
address of the output it returned, under the layouts that matter:

  old     slot 1 escrowed into set 0, slot 0 not (the profiler's layout until 2026-12-04)
  sets01  slot 0 into set 0, slot 1 into set 1 (the profiler's layout since)
  same    both slots into set 0
  none    no escrow

    python benchmarks/slot_order_bias.py [ROUNDS]     # one JSON line per layout
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 300
HOLD = 200_000
TIMED, ESCROW = 1, 2
LAYOUTS = {"old": ((0, 0), (ESCROW, 0)), "sets01": ((ESCROW, 0), (ESCROW, 1)), "same": ((ESCROW, 0), (ESCROW, 0)), "none": ((0, 0), (0, 0))}


def median_us(xs: list[float]) -> float | None:
    return round(statistics.median(xs), 3) if xs else None


def main() -> int:
    import torch
    from native_slot_bias import softmax_in_native_loop

    fn, inputs, out, expect, mod = softmax_in_native_loop()
    escrows = [torch.empty_like(out) for _ in range(2)]
    addresses: dict[int, list[int]] = defaultdict(list)

    def slot_fn(slot: int):
        def call(x):
            y = fn(x)
            addresses[slot].append(y.data_ptr())
            return y
        return call

    for name, slots in LAYOUTS.items():
        mod.bind((slot_fn(0), slot_fn(1)), (inputs,), tuple(((e.data_ptr(), e.numel() * e.element_size()),) for e in escrows), expect)
        for s in (0, 1):
            for _ in range(5):
                mod.call_local(s, 0, 0, 0)
        addresses.clear()
        by: dict[str, list[float]] = defaultdict(list)
        prev = None
        for r in range(ROUNDS):
            for s in ((0, 1) if r % 2 == 0 else (1, 0)):
                flags, eset = slots[s]
                status, _f, ev_ms, _h, text = mod.call_local(s, 0, TIMED | flags, HOLD, eset)
                if status != 0:
                    print(json.dumps({"layout": name, "error": text}))
                    return 1
                by[f"slot{s}"].append(ev_ms * 1e3)
                by[f"slot{s}_after_slot{prev}"].append(ev_ms * 1e3)
                by[f"slot{s}_round_{'even' if r % 2 == 0 else 'odd'}"].append(ev_ms * 1e3)
                prev = s
        row = {"layout": name, "rounds": ROUNDS, **{k: median_us(v) for k, v in sorted(by.items())},
               "output_addresses": {f"slot{s}": len(set(a)) for s, a in addresses.items()},
               "address_shared": bool(set(addresses[0]) & set(addresses[1]))}
        print(json.dumps(row), flush=True)
    torch.cuda.synchronize()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

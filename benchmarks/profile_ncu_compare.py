"""CUPTI kernel times of d2k-profile's timed call against Nsight Compute, per L2 flush.

Three subcommands, run by ``benchmarks/profile_h200.sh`` step ``k`` on a GPU:

  cupti OUT.json [--tuned T.json] [--gap-ms G] [--pinned T.json]
                   every pilot reference and expert call on every workload, timed in this process
                   with d2k-profile's native call (flush, stream hold, events) under torch.profiler,
                   the flushes interleaved call by call: none (warm L2: shows what the flushes
                   evict), write (the old flush), write-read, read (the new default); median kernel
                   time per call; ``--gap-ms G``: G ms idle before each call (see :func:`cupti`);
                   ``--pinned T``: run the configurations an earlier pass's autotuners chose
  ncu MANIFEST [--warm N] [--pinned T.json]
                   the same calls with no flush of ours, for ``ncu --cache-control all
                   --nvtx --nvtx-include <range>/ ...``: each call inside an NVTX range
                   ``cmp_<task>_<workload>_<impl>`` (``ranges`` prints them); writes which calls it made;
                   ``--warm N``: N unprofiled calls just before each profiled one (the GPU's clocks up,
                   as in the CUPTI pass, where a hold kernel and the flush precede every call)
  ranges           the NVTX range names, one per line
  table CUPTI.json MANIFEST NCU.csv
                   the comparison: CUPTI kernel time per flush against ncu's gpu__time_duration,
                   for calls of 10 us or more

Both passes also time a null kernel (a one-element add, ``null/-/null``): its ncu time minus its
CUPTI time is what ncu's gpu__time_duration adds to every kernel (ncu times a launch from the
front end's start of the launch; CUPTI from the first block's start), ~1 us, which alone puts a
10-20 us kernel 5-10 % apart. The table prints every flush against raw ncu and, for the default
read flush, against ncu less that offset, and lists the calls that miss 3 % with why.

The experts are autotuned, and each pass is its own process, which tunes on its own: two processes
may pick different configurations, which would compare two kernels, not two timers. Triton's disk
cache of tuning results does not help (it skips configurations with a pre-hook, as the GEMM
expert's), so ``cupti ... --tuned T`` writes the configuration each autotuner chose, by module
attribute and tuning key, and ``ncu ... --pinned T`` (or ``cupti ... --pinned T``) installs those
choices before its first call: every pass then times the same kernels. (Pinning did not change the
GEMM rows on the H200: their gap is the power cap, see :func:`cupti`'s ``gap_ms``.)

ncu's rows are attributed to calls by NVTX range when ncu renamed them (--print-nvtx-rename
kernel), else by launch order with the kernels per call of the CUPTI pass.
"""

from __future__ import annotations

import csv
import json
import os
import statistics
import sys
import traceback

os.environ.setdefault("TRITON_CACHE_AUTOTUNING", "1")

TASKS = ("softmax", "layernorm", "gemm_bf16")
FLUSHES = {"none": 0, "write": 1, "write-read": 2, "read": 3}
CALLS = 15
NCU_CALLS = 9
HOLD = 100_000
MIN_US = 10.0


_MODULES: dict[str, object] = {}  # "<task>/<impl>" -> the loaded module (for its autotuners)


def impls_of(task):
    from d2k_profile.loader import entry_point, load_module, reference_entry

    ref_mod = load_module(task.reference_path, f"ref_{task.id}")
    expert_mod = load_module(task.expert_path, f"expert_{task.id}")
    _MODULES[f"{task.id}/reference"], _MODULES[f"{task.id}/expert"] = ref_mod, expert_mod
    return ref_mod, {"reference": reference_entry(ref_mod), "expert": entry_point(expert_mod, (), "cuda")}


def _autotuners(module) -> dict[str, object]:
    from triton.runtime.autotuner import Autotuner

    return {name: obj for name, obj in vars(module).items() if isinstance(obj, Autotuner)}


def tuned_choices() -> dict[str, list]:
    """Every autotuner's choices so far: ``{"<task>/<impl>:<attribute>": [[key, config index], ...]}``."""
    out = {}
    for where, module in _MODULES.items():
        for name, tuner in _autotuners(module).items():
            picks = [[list(key) if isinstance(key, tuple) else key, tuner.configs.index(cfg)]
                     for key, cfg in tuner.cache.items() if cfg in tuner.configs]
            if picks:
                out[f"{where}:{name}"] = picks
    return out


def pin_choices(choices: dict[str, list]) -> int:
    """Install :func:`tuned_choices` of another process, so this one runs the same configurations
    without tuning; returns how many it installed."""
    n = 0
    for where, picks in choices.items():
        mod_key, name = where.rsplit(":", 1)
        tuner = _autotuners(_MODULES[mod_key]).get(name) if mod_key in _MODULES else None
        for key, index in picks if tuner is not None else ():
            tuner.cache[tuple(key) if isinstance(key, list) else key] = tuner.configs[index]
            n += 1
    return n


def native_setup():
    import torch

    from d2k_profile import anticheat, native

    mod = native.load(native.build(True))
    base = torch._C.TensorBase
    mod.setup(-1, -1, (torch.Tensor, base.data_ptr, base.nbytes, base.dtype, base.shape, base.is_contiguous, base.is_cuda, base.contiguous,
                       anticheat.classify_exception, lambda e: str(e)), True, torch.cuda.current_stream().cuda_stream,
              torch.cuda.current_device(), 2)
    return mod


def null_impl():
    """The null kernel: a one-element add (one tiny elementwise kernel, no memory traffic to speak of)."""
    import torch

    one = torch.zeros(1, device="cuda")
    return lambda _inputs: one.add_(1.0)


def per_call_kernels(events) -> list[list[tuple[str, float, float]]]:
    """Kernels of each timed call: those between a d2k_hold and the next d2k_mark."""
    spans = sorted(((e.name, e.time_range.start, e.time_range.end) for e in events), key=lambda s: s[1])
    calls, cur = [], None
    for name, start, end in spans:
        if name.startswith("d2k_hold"):
            cur = []
        elif name.startswith("d2k_mark"):
            if cur is not None:
                calls.append(cur)
            cur = None
        elif cur is not None and not name.startswith("d2k_") and not name.startswith(("Memset", "Memcpy")):
            cur.append((name, start, end))  # kernels only: ncu profiles kernels, not memsets
    return calls


def pin_task(tid: str, choices: dict, pinned_for: set) -> None:
    """Pin ``choices`` of task ``tid`` once, when :func:`workloads` first yields it (its modules are loaded then)."""
    if choices and tid not in pinned_for and tid != "null":
        pinned_for.add(tid)
        print(f"{tid}: {pin_choices({k: v for k, v in choices.items() if k.startswith(tid + '/')})} tuned choices pinned", file=sys.stderr)


def cupti(out_path: str, tuned_path: str | None = None, gap_ms: float = 0.0, pinned_path: str | None = None) -> int:
    """``gap_ms``: an idle gap (synchronize, then sleep) before each timed call. Back to back, a
    compute-bound kernel runs the H200 into its power cap (nvidia-smi: ~690 W, clock event reason
    "SW power cap", SM clock 1275-1860 MHz instead of 1980 during the GEMM rows), while ncu's
    serialised replays leave the GPU idle between kernels (under 200 W, 1980 MHz): with gaps both
    passes time the GPU in the same power state, which separates the timers from the power cap."""
    import time

    import torch
    from torch.profiler import ProfilerActivity, profile

    mod = native_setup()
    rows = []
    choices, pinned_for = (json.load(open(pinned_path)) if pinned_path else {}), set()
    for tid, wl, inputs, impls in workloads():
        pin_task(tid, choices, pinned_for)
        for impl, fn in impls.items():
            mod.bind((fn,), (inputs,), (), ())
            for _ in range(3):
                mod.call_local(0, 0, 0, 0)
            # the flushes interleaved call by call, so clock drift hits them alike
            order = [f for _ in range(CALLS) for f in FLUSHES]
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                events_ms = []
                for f in order:
                    if gap_ms:
                        torch.cuda.synchronize()
                        time.sleep(gap_ms / 1e3)
                    mod.set_flush_mode(FLUSHES[f])
                    events_ms.append(mod.call_local(0, 0, 1, HOLD)[2])
                torch.cuda.synchronize()
            calls = per_call_kernels([e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA])
            if len(calls) != len(order):
                print(f"{tid}/{wl.name}/{impl}: {len(calls)} traced calls for {len(order)} made: skipped", flush=True)
                continue
            for flush in FLUSHES:
                mine = [c for c, f in zip(calls, order) if f == flush]
                busy = [sum(e - s for _, s, e in c) for c in mine]
                ev = [e for e, f in zip(events_ms, order) if f == flush]
                rows.append({"task": tid, "workload": wl.name, "impl": impl, "flush": flush, "calls": len(mine),
                             "kernels_per_call": statistics.median(len(c) for c in mine),
                             "kernel_us": statistics.median(busy), "event_us": statistics.median(ev) * 1e3,
                             "names": sorted({n for c in mine for n, _, _ in c})[:4]})
                print(f"{tid}/{wl.name}/{impl} flush={flush}: kernel {rows[-1]['kernel_us']:.2f} us, events {rows[-1]['event_us']:.2f} us", flush=True)
        mod.set_flush_mode(3)
    with open(out_path, "w") as fh:
        json.dump(rows, fh, indent=1)
    if tuned_path:
        with open(tuned_path, "w") as fh:
            json.dump(tuned_choices(), fh, indent=1)
    return 0


class _Null:
    name = "none"


def workloads():
    """(task id, workload, inputs, {impl: callable}) of every pilot call, then the null kernel."""
    from d2k_spec.task import default_tasks_root, load_task

    for tid in TASKS:
        task = load_task(default_tasks_root() / tid)
        ref_mod, impls = impls_of(task)
        for wl in task.workloads:
            yield tid, wl, tuple(ref_mod.make_inputs(wl, 0, "cuda")), impls
    yield "null", _Null(), (), {"null": null_impl()}


def ncu(manifest_path: str, warm: int = 0, pinned_path: str | None = None) -> int:
    """``warm``: calls of the same implementation made just before each profiled call, outside
    its NVTX range (so ncu does not profile them). The CUPTI pass's calls follow a hold kernel and
    a flush, so the GPU is busy and its clocks are up when the timed kernel starts; ncu's calls
    otherwise follow an idle gap (a synchronize and ncu's own work), which a compute-bound kernel
    may pay for at a lower clock."""
    import torch

    manifest = []
    choices, pinned_for = (json.load(open(pinned_path)) if pinned_path else {}), set()
    for tid, wl, inputs, impls in workloads():
        pin_task(tid, choices, pinned_for)
        for impl, fn in impls.items():
            fn(inputs)  # with --pinned, no tuning kernels here (outside the NVTX ranges in any case)
            torch.cuda.synchronize()
            name = f"cmp_{tid}_{wl.name}_{impl}"
            for _ in range(NCU_CALLS):
                for _ in range(warm):
                    fn(inputs)
                torch.cuda.nvtx.range_push(name)
                fn(inputs)
                torch.cuda.nvtx.range_pop()
                torch.cuda.synchronize()
            manifest.append({"key": name, "task": tid, "workload": wl.name, "impl": impl, "calls": NCU_CALLS})
    with open(manifest_path, "w") as fh:
        json.dump(manifest, fh, indent=1)
    return 0


def read_ncu(path: str) -> list[tuple[str, float]]:
    """(kernel name, gpu__time_duration in us) per profiled kernel, in launch order."""
    lines = [ln for ln in open(path, errors="replace") if ln.startswith('"')]
    rows = list(csv.DictReader(lines))
    units = rows[0] if rows and not rows[0].get("ID") else {}  # --page raw: the row under the header holds the units
    out = []
    for r in rows:
        metric = r.get("Metric Name")
        if metric is not None:  # --page details: one row per metric
            if metric != "gpu__time_duration.sum":
                continue
            value, unit = float(r["Metric Value"].replace(",", "")), r.get("Metric Unit", "")
        else:  # --page raw: one row per kernel
            if "gpu__time_duration.sum" not in r:
                continue
            try:
                value = float(r["gpu__time_duration.sum"].replace(",", ""))
            except ValueError:
                continue
            unit = units.get("gpu__time_duration.sum") or "nsecond"
        scale = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3}.get(unit, 1e-3)
        out.append((r.get("Kernel Name", ""), value * scale))
    return out


def table(cupti_path: str, manifest_path: str, ncu_path: str) -> int:
    cup = json.load(open(cupti_path))
    manifest = json.load(open(manifest_path))
    kernels = [(n, us) for n, us in read_ncu(ncu_path) if not n.startswith("d2k_")]
    kpc = {(r["task"], r["workload"], r["impl"]): int(r["kernels_per_call"]) for r in cup if r["flush"] == "write-read"}
    ncu_us: dict[str, list[float]] = {}
    renamed = any(n.startswith("cmp_") for n, _ in kernels)
    if renamed:
        for m in manifest:
            per = [us for n, us in kernels if n.split("/", 1)[0] == m["key"]]  # "<range>/<kernel>" once ncu renamed it
            k = max(1, len(per) // m["calls"])  # ncu's own count of kernels per call
            ncu_us[m["key"]] = [sum(per[i:i + k]) for i in range(0, len(per) - k + 1, k)]
    else:
        pos = 0
        for m in manifest:
            k = max(1, kpc.get((m["task"], m["workload"], m["impl"]), 1))
            n = k * m["calls"]  # ncu profiles only the kernels inside the ranges (--nvtx-include)
            block = [us for _, us in kernels[pos:pos + n]]
            ncu_us[m["key"]] = [sum(block[i:i + k]) for i in range(0, len(block), k)]
            pos += n
        if pos != len(kernels):
            print(f"WARNING: {len(kernels)} kernels profiled, {pos} expected from the manifest: the launch-order attribution is off")
    print(f"attribution: {'by NVTX range (ncu renamed kernels)' if renamed else 'by launch order'}")
    print(f"{'task/workload':36s} {'impl':9s} {'k/call':>6s} {'ncu us':>9s} " + " ".join(f"{f:>15s}" for f in FLUSHES) + "   (CUPTI us and vs ncu)")
    within = {f: [0, 0] for f in FLUSHES}
    for m in manifest:
        key = (m["task"], m["workload"], m["impl"])
        vals = ncu_us.get(m["key"]) or []
        n_us = statistics.median(vals) if vals else None
        cells = []
        for f in FLUSHES:
            r = next((r for r in cup if (r["task"], r["workload"], r["impl"], r["flush"]) == (*key, f)), None)
            k_us = r["kernel_us"] if r else None
            if k_us is None or n_us is None:
                cells.append(f"{'-':>15s}")
                continue
            d = k_us / n_us - 1
            cells.append(f"{k_us:8.2f} {d * 100:+5.1f}%")
            if n_us >= MIN_US:
                within[f][0] += abs(d) <= 0.03
                within[f][1] += 1
        print(f"{m['task'] + '/' + m['workload']:36s} {m['impl']:9s} {kpc.get(key, 0):6d} {n_us if n_us is None else round(n_us, 2)!s:>9s} " + " ".join(cells))
    for f, (ok, n) in within.items():
        print(f"flush {f:10s}: CUPTI kernel time within 3 % of ncu --cache-control all for {ok} of {n} calls of >= {MIN_US:g} us")
    # ncu's fixed per-kernel offset, from the null kernel, and the default flush against ncu less it
    null_key = next((m["key"] for m in manifest if m["task"] == "null"), None)
    null_ncu = statistics.median(ncu_us[null_key]) if null_key and ncu_us.get(null_key) else None
    null_cupti = next((r["kernel_us"] for r in cup if r["task"] == "null" and r["flush"] == "read"), None)
    if null_ncu is None or null_cupti is None:
        print("null kernel: missing from a pass; no offset correction")
        return 0
    off = null_ncu - null_cupti
    print(f"null kernel: ncu {null_ncu:.2f} us, CUPTI {null_cupti:.2f} us: ncu adds {off:+.2f} us per kernel")
    ok = n = 0
    misses = []
    for m in manifest:
        key = (m["task"], m["workload"], m["impl"])
        vals = ncu_us.get(m["key"]) or []
        r = next((r for r in cup if (r["task"], r["workload"], r["impl"], r["flush"]) == (*key, "read")), None)
        if m["task"] == "null" or not vals or r is None or statistics.median(vals) < MIN_US:
            continue
        k = max(1, kpc.get(key, 1))
        n_us = statistics.median(vals)
        corrected = n_us - k * off
        d_raw, d = r["kernel_us"] / n_us - 1, r["kernel_us"] / corrected - 1
        n += 1
        ok += abs(d) <= 0.03
        if abs(d_raw) > 0.03 or abs(d) > 0.03:
            spread = f"ncu calls {min(vals):.2f}..{max(vals):.2f} us"
            misses.append(f"  {m['task']}/{m['workload']} {m['impl']}: CUPTI {r['kernel_us']:.2f} us, ncu {n_us:.2f} us ({d_raw * 100:+.1f} %), "
                          f"less {k} x offset {corrected:.2f} us ({d * 100:+.1f} %); {spread}")
    print(f"flush read, ncu less its null-kernel offset: within 3 % for {ok} of {n} calls of >= {MIN_US:g} us")
    print("calls missing 3 % (raw or corrected), default flush:" if misses else "no call misses 3 % with the default flush")
    for line in misses:
        print(line)
    return 0


def main(argv: list[str]) -> int:
    try:
        opts = dict(zip(argv[2::2], argv[3::2]))  # "--warm N", "--tuned PATH", ... after the positional path
        if argv[0] == "cupti":
            return cupti(argv[1], opts.get("--tuned"), float(opts.get("--gap-ms", 0)), opts.get("--pinned"))
        if argv[0] == "ncu":
            return ncu(argv[1], int(opts.get("--warm", 0)), opts.get("--pinned"))
        if argv[0] == "table":
            return table(*argv[1:4])
        if argv[0] == "ranges":
            from d2k_spec.task import default_tasks_root, load_task

            for tid in TASKS:
                for wl in load_task(default_tasks_root() / tid).workloads:
                    print(f"cmp_{tid}_{wl.name}_reference\ncmp_{tid}_{wl.name}_expert")
            print("cmp_null_none_null")
            return 0
    except Exception:  # noqa: BLE001  (a benchmark script: print the traceback, exit 1)
        traceback.print_exc()
        return 1
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

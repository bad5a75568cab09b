"""Tuning sweeps and bandwidth ceilings for the family-1 experts, on one GPU.

    python3 benchmarks/family1_tune.py [--only scan,hist,copy,xent,rows,rows_cluster,rowdep] [--reps 20]

Prints tables (CUDA events, median of ``--reps`` timed calls after warm-up, L2 flushed
before each call by writing a 256 MB buffer):

* ``scan``: the prefix_scan expert (CUDA) and its variants at other (CTA, vectors per thread),
  the Triton look-back corpus kernel at three tile sizes, and torch.cumsum, on each workload's first seed, each result checked against
  torch.cumsum (exact for int32, the task's tolerance for float32).
* ``hist``: the histogram expert at each (CTAs per SM, shared copies per CTA), plus
  torch.bincount, each result checked exactly. (The warp-aggregation variants measured in
  examples/h200/family1/tune_run2.txt were taken out of the expert after that run.)
* ``xent``: the cross_entropy expert at each launch setting (chunk width, warps, pipeline stages),
  the previous expert when ``benchmarks/_old_xent.py`` holds a copy of it, ``F.cross_entropy``
  and ``logits.amax()`` (a read of the same bytes), each result checked against the task's tolerance.
* ``rows`` / ``rows_cluster``: the softmax and layernorm experts against the persistent pipelined
  prototype (benchmarks/rows_persistent.py) and, with ``rows_cluster``, the cluster-split CUDA one
  (benchmarks/row_cluster.cu), beside a copy of each workload's bytes.
* ``rowdep``: the softmax and layernorm experts beside the two structural ceilings of
  benchmarks/rows_ceiling.py (one program per row holding the row in registers: stored back
  unchanged, or centred after a reduction over the row) and a copy of the same bytes, on the
  workloads whose rows fit in registers (N <= 32768). The "ok" column is not a check here: the
  ceilings compute something else on purpose.
* ``copy``: the bandwidth a plain device copy reaches at each memory-bound workload's own bytes
  (read the input bytes once, write the output bytes once) - the ceiling an elementwise-class
  kernel of that size can reach on this GPU, to set the "fraction of HBM bandwidth" of the
  experts against what the memory system gives at that size.

Numbers go to standard output; nothing is written elsewhere. Needs a CUDA GPU.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from d2k_spec.inputs_check import load_reference  # noqa: E402
from d2k_spec.task import load_tasks  # noqa: E402

_flush = None


def load_module(path: Path, name: str):
    """Import the file at ``path`` as module ``name`` (an expert, a reference, a prototype)."""
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def time_ms(fn, reps: int) -> float:
    """Median ms of ``fn()`` over ``reps`` calls, each after an L2 flush, by CUDA events."""
    global _flush
    if _flush is None:
        _flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        _flush.fill_(1)
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def _close(got: torch.Tensor, want: torch.Tensor, tol) -> bool:
    return bool(torch.allclose(got.float(), want.float(), rtol=tol.rtol, atol=tol.atol))


def _rows(label: str, table: list, reps: int, nbytes: float, check) -> None:
    """Time and check each (name, fn) of ``table``; a failing variant is a row, not the end."""
    for name, fn in table:
        try:
            ok = check(fn())
            ms = time_ms(fn, reps)
            print(f"{label:28s} {name:34s} {ms:9.4f} {nbytes / ms / 1e6:7.0f} {ok}", flush=True)
        except Exception as exc:  # noqa: BLE001 - a failing variant is a row, not the end
            print(f"{label:28s} {name:34s} failed: {type(exc).__name__}: {str(exc)[:300]}", flush=True)


def _workloads(task):
    return [w for w in task.workloads]


_variants: dict = {}


def _scan_variant(cta: int, vec: int):
    """The CUDA expert scan rebuilt with another CTA size and vectors per thread."""
    if (cta, vec) not in _variants:
        from torch.utils.cpp_extension import load_inline

        folder = REPO / "tasks/prefix_scan/expert"
        src = (folder / "kernel.cu").read_text()
        src = src.replace("#define CTA 512", f"#define CTA {cta}").replace("#define VEC_PER_THREAD 4", f"#define VEC_PER_THREAD {vec}")
        bind = load_module(folder / "submission.py", "scan_cuda_bind")._BIND
        _variants[(cta, vec)] = load_inline(name=f"scan_variant_{cta}_{vec}", cpp_sources=bind, cuda_sources=src,
                                            functions=["inclusive_scan"], extra_cuda_cflags=["-O3"])
    return _variants[(cta, vec)]


def _scan_state(mod, x):
    """Status words, ticket and a fresh epoch from the expert submission's own buffers."""
    tiles = (x.numel() + 4095) // 4096
    b = mod._bufs.get(x.device)
    if b is None or b[0].numel() < tiles:
        b = mod._bufs[x.device] = [torch.zeros(max(tiles, 4096), dtype=torch.int64, device=x.device),
                                   torch.zeros(1, dtype=torch.int32, device=x.device), 0]
    b[2] = b[2] % (1 << 29) + 1
    return b[0], b[1], b[2]


def scan_table(tasks, reps: int) -> None:
    task = tasks["prefix_scan"]
    ref = load_reference(task)
    expert = load_module(REPO / "corpus/prefix_scan/lookback_triton/submission.py", "scan_triton")
    cuda = load_module(REPO / "tasks/prefix_scan/expert/submission.py", "scan_expert")
    tol = task.tolerance["float32"]
    print("\n== scan: prefix_scan (GB/s from bytes_moved; ok = matches torch.cumsum)")
    print(f"{'workload':28s} {'variant':34s} {'ms':>9s} {'GB/s':>7s} ok")
    for w in _workloads(task):
        (x,) = ref.make_inputs(w, w.seeds[0], "cuda")
        want = torch.cumsum(x, 0, dtype=x.dtype)
        nbytes = ref.bytes_moved(dict(w.params))

        def check(y):
            if x.dtype == torch.int32:
                return bool(torch.equal(y, want))
            return bool(torch.allclose(y, want, rtol=tol.rtol, atol=tol.atol))

        rows = [("torch.cumsum", lambda: torch.cumsum(x, 0, dtype=x.dtype))]
        for block in (4096, 8192, 16384):
            def call(block=block):
                expert.TILE = block
                return expert.run(x)
            rows.append((f"triton look-back TILE={block}", call))
        rows.append(("expert (CUDA)", lambda: cuda.run(x)))
        for cta, vec in ((256, 4), (512, 8), (128, 8)):
            mod = _scan_variant(cta, vec)
            rows.append((f"cuda CTA={cta} VEC={vec}", lambda mod=mod: mod.inclusive_scan(x, *_scan_state(cuda, x))))
        _rows(w.name, rows, reps, nbytes, check)
        expert.TILE = 4096


def hist_table(tasks, reps: int) -> None:
    task = tasks["histogram"]
    ref = load_reference(task)
    expert = load_module(REPO / "tasks/histogram/expert/submission.py", "hist_expert")
    defaults = (expert.BLOCKS_PER_SM, expert.COPIES)
    print("\n== hist: histogram (GB/s from bytes_moved; ok = equals torch.bincount)")
    print(f"{'workload':28s} {'variant':34s} {'ms':>9s} {'GB/s':>7s} ok")
    for w in _workloads(task):
        x, bins = ref.make_inputs(w, w.seeds[0], "cuda")
        want = torch.bincount(x, minlength=bins).to(torch.int32)
        nbytes = ref.bytes_moved(dict(w.params))
        rows = [("torch.bincount", lambda: torch.bincount(x, minlength=bins).to(torch.int32))]
        for per_sm in (2, 4):
            for copies in (1, 16):
                def call(per_sm=per_sm, copies=copies):
                    expert.BLOCKS_PER_SM, expert.COPIES = per_sm, copies
                    return expert.run(x, bins)
                rows.append((f"expert ctas/sm={per_sm} copies={copies}", call))
        _rows(w.name, rows, reps, nbytes, lambda y: bool(torch.equal(y, want)))
        expert.BLOCKS_PER_SM, expert.COPIES = defaults


def xent_table(tasks, reps: int) -> None:
    """The cross_entropy expert at each launch setting, beside the previous expert and the reference."""
    import torch.nn.functional as F

    task = tasks["cross_entropy"]
    ref = load_reference(task)
    expert = load_module(REPO / "tasks/cross_entropy/expert/submission.py", "xent_expert")
    old = REPO / "benchmarks/_old_xent.py"
    previous = load_module(old, "xent_previous") if old.exists() else None
    tol = task.tolerance["float32"]
    print("\n== xent: cross_entropy (GB/s from bytes_moved; ok = within the task's tolerance of F.cross_entropy)")
    print(f"{'workload':28s} {'variant':34s} {'ms':>9s} {'GB/s':>7s} ok")
    settings = [(bl, w, st) for bl in (4096, 8192) for w in (4, 8) for st in (1, 2)]
    settings += [(bl, 4, st) for bl in (2048, 4096) for st in (3, 4)]
    for w in [w for w in task.workloads if not w.smoke]:
        logits, target = ref.make_inputs(w, w.seeds[0], "cuda")
        want = F.cross_entropy(logits.float(), target)
        table = [("F.cross_entropy(fp32)", lambda: F.cross_entropy(logits.float(), target))]
        if previous is not None:
            table.append(("previous expert", lambda: previous.run(logits, target)))
        table.append(("expert (default)", lambda: expert.run(logits, target)))
        for bl, nw, st in settings:
            table.append((f"b{bl} w{nw} s{st}", lambda bl=bl, nw=nw, st=st: expert.launch(logits, target, bl, nw, st)))
        nbytes = ref.bytes_moved(dict(w.params))
        _rows(w.name, [("read ceiling: logits.amax()", lambda: logits.amax())], reps, nbytes, lambda y: True)
        _rows(w.name, table, reps, nbytes, lambda y: _close(y, want, tol))
        del logits, target


_ROW_BIND = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
int row_cluster_launch(const void*, void*, const void*, const void*, long, int, bool, int, int, int, int, float, cudaStream_t);
bool row_cluster(torch::Tensor x, torch::Tensor y, torch::Tensor w, torch::Tensor b, int64_t cluster, int64_t threads,
                 int64_t vec, int64_t op, double eps) {
    int rc = row_cluster_launch(x.data_ptr(), y.data_ptr(), op ? w.data_ptr() : nullptr, op ? b.data_ptr() : nullptr,
                                x.size(0), (int)x.size(1), x.scalar_type() == at::kBFloat16, (int)cluster, (int)threads,
                                (int)vec, (int)op, (float)eps, at::cuda::getCurrentCUDAStream());
    TORCH_CHECK(rc <= 0, "cluster launch failed: ", cudaGetErrorString((cudaError_t)rc));
    return rc == 0;
}
"""

# (cluster, threads, vectors per thread) compiled in benchmarks/row_cluster.cu
_ROW_CASES = {"bfloat16": [(4, 256, 4), (8, 256, 2), (8, 128, 4), (2, 512, 4), (16, 128, 2), (2, 256, 2), (1, 512, 2),
                           (4, 128, 2), (1, 256, 4)],
              "float32": [(8, 1024, 8), (16, 512, 8), (16, 1024, 4), (16, 256, 16)]}


def rows_table(tasks, reps: int, cluster: bool) -> None:
    """Softmax and LayerNorm experts against the persistent pipelined prototype
    (benchmarks/rows_persistent.py) and, with ``cluster``, the cluster-split one (benchmarks/row_cluster.cu)."""
    import torch.nn.functional as F
    import triton
    from torch.utils.cpp_extension import load_inline

    persistent = load_module(REPO / "benchmarks/rows_persistent.py", "rows_persistent")
    mod = load_inline(name="row_cluster_proto", cpp_sources=_ROW_BIND,
                      cuda_sources=(REPO / "benchmarks/row_cluster.cu").read_text(), functions=["row_cluster"],
                      extra_cuda_cflags=["-O3", "-gencode=arch=compute_90a,code=sm_90a"]) if cluster else None
    print("\n== rows: softmax / layernorm (GB/s from bytes_moved; ok = within the task's tolerance of torch)")
    print(f"{'workload':28s} {'variant':34s} {'ms':>9s} {'GB/s':>7s} ok")
    for tid, op in (("softmax", 0), ("layernorm", 1)):
        task = tasks[tid]
        ref = load_reference(task)
        expert = load_module(REPO / f"tasks/{tid}/expert/submission.py", f"{tid}_expert")
        for w in [w for w in task.workloads if not w.smoke]:
            inputs = ref.make_inputs(w, w.seeds[0], "cuda")
            x = inputs[0]
            dtype = str(w.params.get("dtype", "bfloat16"))
            tol = task.tolerance[dtype] if dtype in task.tolerance else next(iter(task.tolerance.values()))
            want = torch.softmax(x.float(), -1) if op == 0 else F.layer_norm(x.float(), (x.shape[1],), inputs[1].float(),
                                                                             inputs[2].float(), 1e-5)
            nbytes = ref.bytes_moved(dict(w.params))
            table = [("expert", lambda: expert.run(*inputs))]
            wb = (inputs[1], inputs[2]) if op else (x, x)
            for c, t, v in _ROW_CASES.get(dtype, []) if cluster else []:
                if c * t * v * (16 // x.element_size()) != x.shape[1]:
                    continue
                y = torch.empty_like(x)

                def call(c=c, t=t, v=v, y=y):
                    mod.row_cluster(x, y, wb[0], wb[1], c, t, v, op, 1e-5)
                    return y
                table.append((f"cluster {c} x {t} thr x {v} vec", call))
            if x.shape[1] <= 32768:
                for nw in (4, 8, 16, 32):
                    if not 4 <= triton.next_power_of_2(x.shape[1]) // (32 * nw) <= 64:
                        continue
                    for st in (1, 2, 3):
                        for per_sm in (0, 1, 2):
                            if op == 0:
                                fn = lambda nw=nw, st=st, p=per_sm: persistent.softmax(x, nw, st, p)  # noqa: E731
                            else:
                                fn = lambda nw=nw, st=st, p=per_sm: persistent.layernorm(x, *wb, nw, st, p)  # noqa: E731
                            table.append((f"persistent w{nw} s{st} p{per_sm or 'fit'}", fn))
            half = max(int(nbytes) // 2, 16) // 16 * 16
            src = torch.empty(half, dtype=torch.uint8, device="cuda")
            dst = torch.empty_like(src)
            _rows(f"{tid}/{w.name}", [("copy of the same bytes", lambda: dst.copy_(src))], reps, nbytes, lambda y: True)
            _rows(f"{tid}/{w.name}", table, reps, nbytes, lambda y: _close(y, want, tol))
            del inputs, x, src, dst


_L2_BIND = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
extern "C" int softmax_l2_launch(const float*, float*, long, int, int, int, int, cudaStream_t);
void softmax_l2(torch::Tensor x, torch::Tensor y, int64_t split, int64_t threads, int64_t smem) {
    int rc = softmax_l2_launch(x.data_ptr<float>(), y.data_ptr<float>(), x.size(0), (int)x.size(1), (int)split,
                               (int)threads, (int)smem, at::cuda::getCurrentCUDAStream());
    TORCH_CHECK(rc == 0, "softmax_l2 launch failed: ", rc < 0 ? "shape" : cudaGetErrorString((cudaError_t)rc));
}
"""


def _softmax_l2_rows(x: torch.Tensor) -> list:
    """benchmarks/row_l2.cu (two-pass fp32 softmax, second read from L2) at each (cluster split,
    threads, CTAs per SM through the dynamic shared memory asked for)."""
    from torch.utils.cpp_extension import load_inline

    mod = load_inline(name="softmax_l2_proto", cpp_sources=_L2_BIND, cuda_sources=(REPO / "benchmarks/row_l2.cu").read_text(),
                      functions=["softmax_l2"], extra_cuda_cflags=["-O3", "-gencode=arch=compute_90a,code=sm_90a"])
    y = torch.empty_like(x)
    table = []
    for split in (2, 4, 8, 16):
        for threads in (256, 512, 1024):
            for per_sm, smem in ((1, 160 << 10), (2, 100 << 10), (4, 50 << 10), (0, 0)):
                def call(split=split, threads=threads, smem=smem):
                    mod.softmax_l2(x, y, split, threads, smem)
                    return y
                table.append((f"l2 split{split} t{threads} {per_sm or 'max'}/SM", call))
    return table


def rowdep_table(tasks, reps: int) -> None:
    """The softmax / layernorm experts beside the two structural ceilings of benchmarks/rows_ceiling.py
    (whole row in registers: copied back, or centred after a row reduction) and a device copy; for
    the fp32 softmax rows (too long for registers), the L2 re-read prototype benchmarks/row_l2.cu."""
    ceiling = load_module(REPO / "benchmarks/rows_ceiling.py", "rows_ceiling")
    print("\n== rowdep: one program per row, row held in registers (GB/s from bytes_moved)")
    print(f"{'workload':28s} {'variant':34s} {'ms':>9s} {'GB/s':>7s} ok")
    for tid in ("softmax", "layernorm"):
        task = tasks[tid]
        ref = load_reference(task)
        expert = load_module(REPO / f"tasks/{tid}/expert/submission.py", f"{tid}_expert_rowdep")
        for w in [w for w in task.workloads if not w.smoke and w.params["N"] <= 32768]:
            inputs = ref.make_inputs(w, w.seeds[0], "cuda")
            x = inputs[0]
            y = torch.empty_like(x)
            nbytes = ref.bytes_moved(dict(w.params))
            src = torch.empty(max(int(nbytes) // 2, 16) // 16 * 16, dtype=torch.uint8, device="cuda")
            dst = torch.empty_like(src)
            table = [("expert", lambda: expert.run(*inputs)), ("copy of the same bytes", lambda: dst.copy_(src))]
            for kind in ("row_copy", "row_center"):
                for nw in (4, 8, 16, 32):
                    if x.shape[1] // (32 * nw) <= 128:  # at most 128 elements held per thread
                        table.append((f"{kind} w{nw}", lambda k=kind, nw=nw: ceiling.run(k, x, y, nw)))
            _rows(f"{tid}/{w.name}", table, reps, nbytes, lambda out: True)
            del inputs, x, y, src, dst
    task = tasks["softmax"]
    ref = load_reference(task)
    for w in [w for w in task.workloads if w.params.get("dtype") == "float32" and not w.smoke]:
        x = ref.make_inputs(w, w.seeds[0], "cuda")[0]
        want = torch.softmax(x, -1)
        tol = task.tolerance["float32"]
        expert = load_module(REPO / "tasks/softmax/expert/submission.py", "softmax_expert_l2")
        _rows(f"softmax/{w.name}", [("expert", lambda: expert.run(x))] + _softmax_l2_rows(x), reps,
              ref.bytes_moved(dict(w.params)), lambda out: _close(out, want, tol))
        del x, want


def copy_table(tasks, reps: int) -> None:
    print("\n== copy: a device copy of each workload's minimum bytes (half read, half written where the task writes as much as it reads)")
    print(f"{'task':18s} {'workload':28s} {'MB':>8s} {'copy ms':>9s} {'copy GB/s':>9s}")
    for tid in ("softmax", "layernorm", "rmsnorm_residual", "swiglu", "cross_entropy", "rope", "reduce_sum",
                "transpose", "prefix_scan", "histogram"):
        if tid not in tasks:
            continue
        ref = load_reference(tasks[tid])
        for w in _workloads(tasks[tid]):
            total = int(ref.bytes_moved(dict(w.params)))
            half = max(total // 2, 16) // 16 * 16
            src = torch.empty(half, dtype=torch.uint8, device="cuda")
            dst = torch.empty_like(src)
            ms = time_ms(lambda: dst.copy_(src), reps)
            print(f"{tid:18s} {w.name:28s} {2 * half / 1e6:8.1f} {ms:9.4f} {2 * half / ms / 1e6:9.0f}", flush=True)
            del src, dst


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default="scan,hist,copy", help="comma-separated tables: scan, hist, copy, xent, rows, rows_cluster, rowdep")
    ap.add_argument("--reps", type=int, default=20, help="timed calls per row (median)")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("family1_tune: needs a CUDA GPU", file=sys.stderr)
        return 2
    print("device:", torch.cuda.get_device_name(), "torch", torch.__version__)
    tasks = load_tasks(REPO / "tasks")
    only = set(args.only.split(","))
    if "hist" in only:
        hist_table(tasks, args.reps)
    if "copy" in only:
        copy_table(tasks, args.reps)
    if "rowdep" in only:
        rowdep_table(tasks, args.reps)
    if "xent" in only:
        xent_table(tasks, args.reps)
    if "rows" in only or "rows_cluster" in only:
        rows_table(tasks, args.reps, cluster="rows_cluster" in only)
    if "scan" in only:  # last: a look-back bug would spin until the caller's timeout
        scan_table(tasks, args.reps)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Launch-setting and loop-schedule variants of the fp8_gemm_blockscale expert, for d2k-profile to time.

Why a profile run rather than a sweep: on the H200 a back-to-back sweep of compute-bound kernels
runs into the GPU's power cap part-way, so settings timed later look slower than the reference
timed first (benchmarks/tune_fp8_gemm_blockscale.py's 0.80x for num_stages 5 on m2048 was such an
artifact). d2k-profile times each variant interleaved with the reference and the expert, so the
cap hits all three alike. Usage on a GPU machine:

    python benchmarks/fp8_launch_variants.py /tmp/fp8v [--set dec04|ws|small]
    d2k-profile /tmp/fp8v --task fp8_gemm_blockscale --budget 0.5 --out /tmp/fp8out
    (``small``: add ``--workloads m128_n7168_k16384``)

Each variant replaces the expert's LARGE (M >= 512) and SMALL_M settings, (BLOCK_M, BLOCK_N,
GROUP_M, SPLIT_K, num_stages, num_warps), and may ask Triton to warp-specialise the K loop
(``tl.range(..., warp_specialize=True)``: producer warps issue the loads, consumer warps the MMAs
and the per-block scale promotion, so the promotion's CUDA-core work can overlap the next block's
MMAs, the design item the expert leaves out). The records' speedup_vs_expert compares each with
the unchanged expert. A variant Triton cannot compile on the GPU at hand gets a runtime_error
record, which is itself the answer. Results: ``dec04`` of 2026-12-04 in
examples/h200/dec04/fp8_launch_variants.jsonl (the expert then split K in two on M < 512; it has
used split 1 there since 2026-12-05, so ``split2_64x128`` of the ``small`` set is that old setting).
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

EXPERT = Path(__file__).resolve().parents[1] / "tasks/fp8_gemm_blockscale/expert/submission.py"
SETS = {  # name: {variant: (LARGE, SMALL_M, warp-specialised K loop)}
    "dec04": {
        "v1_s3_split1": ("(128, 128, 8, 1, 3, 8)", "(64, 128, 8, 1, 5, 4)", False),
        "v2_s5_s4w4": ("(128, 128, 8, 1, 5, 8)", "(64, 128, 8, 1, 4, 4)", False),
        "v3_g16_split3": ("(128, 128, 16, 1, 4, 8)", "(64, 128, 8, 3, 4, 4)", False),
        "v4_m256": ("(256, 128, 8, 1, 3, 8)", "(128, 128, 8, 3, 4, 8)", False),
    },
    "ws": {
        "ws_expert": ("(128, 128, 8, 1, 4, 8)", "(64, 128, 8, 2, 5, 4)", True),
        "ws_s3_split1": ("(128, 128, 8, 1, 3, 8)", "(64, 128, 8, 1, 5, 4)", True),
        "v1_s3_split1": ("(128, 128, 8, 1, 3, 8)", "(64, 128, 8, 1, 5, 4)", False),
    },
    "small": {  # the decode shape only (--workloads m128_n7168_k16384); the expert's LARGE kept
        "split2_64x128": ("(128, 128, 8, 1, 4, 8)", "(64, 128, 8, 2, 5, 4)", False),
        "s1_128x64": ("(128, 128, 8, 1, 4, 8)", "(128, 64, 8, 1, 5, 4)", False),
        "s1_128x64_w8": ("(128, 128, 8, 1, 4, 8)", "(128, 64, 8, 1, 4, 8)", False),
        "s1_64x64": ("(128, 128, 8, 1, 4, 8)", "(64, 64, 8, 1, 6, 4)", False),
        "s1_64x128_s6": ("(128, 128, 8, 1, 4, 8)", "(64, 128, 8, 1, 6, 4)", False),
    },
}
K_LOOP = "tl.range(kb_lo, kb_hi, num_stages=NUM_STAGES)"


def _replace_once(pattern: str, repl: str, text: str, what: str, flags: int = 0) -> str:
    out, n = re.subn(pattern, repl, text, flags=flags)
    if n != 1:
        raise SystemExit(f"{EXPERT}: expected one {what}, found {n}")
    return out


def variant_source(src: str, large: str, small: str, warp_specialize: bool) -> str:
    text = _replace_once(r"^LARGE = \([^)]*\)", f"LARGE = {large}", src, "LARGE assignment", re.M)
    text = _replace_once(r"^SMALL_M = \([^)]*\)", f"SMALL_M = {small}", text, "SMALL_M assignment", re.M)
    if warp_specialize:
        text = _replace_once(re.escape(K_LOOP), K_LOOP[:-1] + ", warp_specialize=True)", text, "K loop")
    return text


def write_variants(out: Path, which: str = "ws") -> list[str]:
    src = EXPERT.read_text()
    for name, (large, small, ws) in SETS[which].items():
        (out / name).mkdir(parents=True, exist_ok=True)
        (out / name / "submission.py").write_text(variant_source(src, large, small, ws))
    return sorted(SETS[which])


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path, help="folder to write one submission folder per variant into")
    ap.add_argument("--set", default="ws", choices=sorted(SETS), help="which variants (default: ws)")
    args = ap.parse_args()
    print(write_variants(args.out, args.set))

"""Launch-setting variants of the fp8_gemm_blockscale expert, for d2k-profile to time.

Why a profile run rather than a sweep: on the H200 a back-to-back sweep of compute-bound kernels
runs into the GPU's power cap part-way, so settings timed later look slower than the reference
timed first (benchmarks/tune_fp8_gemm_blockscale.py's 0.80x for num_stages 5 on m2048 was such an
artifact). d2k-profile times each variant interleaved with the reference and the expert, so the
cap hits all three alike. Usage on a GPU machine:

    python benchmarks/fp8_launch_variants.py /tmp/fp8v
    d2k-profile /tmp/fp8v --task fp8_gemm_blockscale --budget 0.5 --out /tmp/fp8out

Each variant replaces the expert's LARGE (M >= 512) and SMALL_M settings, (BLOCK_M, BLOCK_N,
GROUP_M, SPLIT_K, num_stages, num_warps); the records' speedup_vs_expert compares it with the
unchanged expert. Results of 2026-12-04: examples/h200/dec04/fp8_launch_variants.jsonl.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

EXPERT = Path(__file__).resolve().parents[1] / "tasks/fp8_gemm_blockscale/expert/submission.py"
VARIANTS = {  # name: (LARGE, SMALL_M)
    "v1_s3_split1": ("(128, 128, 8, 1, 3, 8)", "(64, 128, 8, 1, 5, 4)"),
    "v2_s5_s4w4": ("(128, 128, 8, 1, 5, 8)", "(64, 128, 8, 1, 4, 4)"),
    "v3_g16_split3": ("(128, 128, 16, 1, 4, 8)", "(64, 128, 8, 3, 4, 4)"),
    "v4_m256": ("(256, 128, 8, 1, 3, 8)", "(128, 128, 8, 3, 4, 8)"),
}


def write_variants(out: Path) -> list[str]:
    src = EXPERT.read_text()
    for name, (large, small) in VARIANTS.items():
        text, n_large = re.subn(r"^LARGE = \([^)]*\)", f"LARGE = {large}", src, flags=re.M)
        text, n_small = re.subn(r"^SMALL_M = \([^)]*\)", f"SMALL_M = {small}", text, flags=re.M)
        if (n_large, n_small) != (1, 1):
            raise SystemExit(f"{EXPERT}: expected one LARGE and one SMALL_M assignment, found {n_large} and {n_small}")
        (out / name).mkdir(parents=True, exist_ok=True)
        (out / name / "submission.py").write_text(text)
    return sorted(VARIANTS)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    print(write_variants(Path(sys.argv[1])))

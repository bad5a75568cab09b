"""Measurement metrics: speedups, throughput, roofline, sample statistics.

All functions are pure and take plain numbers, so they are unit-tested against hand-computed values.
Times are in milliseconds throughout. The run metrics (geomean, correctness, Performance Score,
fast_p) are defined once in :mod:`d2k_spec.run_metrics`, shared with ``d2k-report``, and
re-exported here.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from statistics import median

from d2k_spec.run_metrics import fast_p, geomean, performance_score, run_performance_score  # noqa: F401 - re-exported


@dataclass(frozen=True)
class DevicePeaks:
    """Dense (no sparsity) peaks of one GPU model, from the vendor data sheets.

    ``tensor_tflops`` is per input dtype of the tensor cores; ``bandwidth_gbps`` is HBM bandwidth.
    Peaks are used for the *fraction of peak* and the roofline plausibility floor; a measured
    peak can replace a table entry (see :func:`peaks_for`)."""

    name: str
    tensor_tflops: dict[str, float]
    fp32_tflops: float
    bandwidth_gbps: float


# Matched by substring of torch.cuda.get_device_name(), most specific first.
PEAK_TABLE: list[tuple[str, DevicePeaks]] = [
    ("H200", DevicePeaks("H200", {"bfloat16": 989.4, "float16": 989.4, "tf32": 494.7, "float8_e4m3fn": 1978.9, "int8": 1978.9}, 66.9, 4800.0)),
    ("H100 PCIe", DevicePeaks("H100 PCIe", {"bfloat16": 756.0, "float16": 756.0, "tf32": 378.0, "float8_e4m3fn": 1513.0, "int8": 1513.0}, 51.2, 2000.0)),
    ("H100", DevicePeaks("H100 SXM", {"bfloat16": 989.4, "float16": 989.4, "tf32": 494.7, "float8_e4m3fn": 1978.9, "int8": 1978.9}, 66.9, 3350.0)),
    ("B200", DevicePeaks("B200", {"bfloat16": 2250.0, "float16": 2250.0, "tf32": 1100.0, "float8_e4m3fn": 4500.0, "int8": 4500.0}, 75.0, 8000.0)),
    ("A100", DevicePeaks("A100", {"bfloat16": 312.0, "float16": 312.0, "tf32": 156.0, "int8": 624.0}, 19.5, 2039.0)),
    ("L40S", DevicePeaks("L40S", {"bfloat16": 362.1, "float16": 362.1, "tf32": 183.0, "float8_e4m3fn": 733.0, "int8": 733.0}, 91.6, 864.0)),
]


def peaks_for(device_name: str) -> DevicePeaks | None:
    """Table peaks for a device name such as ``NVIDIA H200``; None for an unknown model."""
    for needle, peaks in PEAK_TABLE:
        if needle.lower() in device_name.lower():
            return peaks
    return None


def compute_peak_tflops(peaks: DevicePeaks, dtype: str) -> float:
    """The most generous compute peak a kernel on ``dtype`` data could reach.

    Generous on purpose: the roofline floor must never call an honest kernel impossible, so fp32
    work is allowed TF32 tensor cores and integer work the int8 rate."""
    if dtype in peaks.tensor_tflops:
        return peaks.tensor_tflops[dtype]
    if dtype == "float32":
        return max(peaks.fp32_tflops, peaks.tensor_tflops.get("tf32", 0.0))
    return max([peaks.fp32_tflops, *peaks.tensor_tflops.values()])


def speedup(baseline_ms: float | None, candidate_ms: float | None) -> float | None:
    """baseline time / candidate time (> 1 means the candidate is faster)."""
    if not baseline_ms or not candidate_ms or candidate_ms <= 0:
        return None
    return baseline_ms / candidate_ms


def tflops(flop_count: float, ms: float | None) -> float | None:
    if not ms or not flop_count:
        return None
    return flop_count / (ms * 1e-3) / 1e12


def gbps(byte_count: float, ms: float | None) -> float | None:
    if not ms or not byte_count:
        return None
    return byte_count / (ms * 1e-3) / 1e9


def roofline_floor_ms(flop_count: float, byte_count: float, peak_tflops: float, peak_gbps: float) -> float:
    """Fewest milliseconds any kernel can take: the slower of the compute and memory bounds."""
    compute_ms = flop_count / (peak_tflops * 1e12) * 1e3 if peak_tflops else 0.0
    memory_ms = byte_count / (peak_gbps * 1e9) * 1e3 if peak_gbps else 0.0
    return max(compute_ms, memory_ms)


def below_roofline(measured_ms: float, floor_ms: float, slack: float = 0.9) -> bool:
    """True when a time is impossible: under ``slack`` x the roofline floor (slack absorbs the
    data-sheet rounding and boost clocks)."""
    return floor_ms > 0 and measured_ms < slack * floor_ms


def summarize_samples(samples: list[float]) -> dict[str, float]:
    """Median, IQR, min, mean and relative standard error of the mean of timing samples."""
    xs = sorted(samples)
    n = len(xs)
    if n == 0:
        raise ValueError("no samples")
    mean = sum(xs) / n
    var = sum((x - mean) ** 2 for x in xs) / (n - 1) if n > 1 else 0.0
    rse = math.sqrt(var / n) / mean if mean > 0 else float("inf")
    return {"median_ms": median(xs), "iqr_ms": quantile(xs, 0.75) - quantile(xs, 0.25), "min_ms": xs[0], "mean_ms": mean, "rse": rse, "n": n}


def quantile(sorted_xs: list[float], q: float) -> float:
    """Linear-interpolation quantile (numpy's default) of already sorted values."""
    if len(sorted_xs) == 1:
        return sorted_xs[0]
    pos = q * (len(sorted_xs) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_xs) - 1)
    return sorted_xs[lo] + (sorted_xs[hi] - sorted_xs[lo]) * (pos - lo)


def bootstrap_speedup_ci(baseline: list[float], candidate: list[float], n_boot: int = 1000, seed: int = 0) -> tuple[float, float] | None:
    """95 % bootstrap interval of median(baseline) / median(candidate)."""
    if len(baseline) < 2 or len(candidate) < 2:
        return None
    rng = random.Random(seed)
    ratios = []
    for _ in range(n_boot):
        b = median(rng.choices(baseline, k=len(baseline)))
        c = median(rng.choices(candidate, k=len(candidate)))
        ratios.append(b / c)
    ratios.sort()
    return quantile(ratios, 0.025), quantile(ratios, 0.975)

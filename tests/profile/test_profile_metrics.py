"""Metric functions against hand-computed values."""

import math

import pytest

from d2k_profile import metrics


def test_speedup_and_geomean():
    assert metrics.speedup(2.0, 1.0) == 2.0
    assert metrics.speedup(1.0, 4.0) == 0.25
    assert metrics.speedup(None, 1.0) is None
    assert metrics.geomean([2.0, 8.0]) == pytest.approx(4.0)
    assert metrics.geomean([1.0, 10.0, 100.0]) == pytest.approx(10.0)
    assert metrics.geomean([]) is None


def test_throughput():
    # 2*4096^3 flop in 1 ms = 137.44 TFLOP/s; 1 GB in 1 ms = 1000 GB/s
    assert metrics.tflops(2 * 4096**3, 1.0) == pytest.approx(137.438953472)
    assert metrics.gbps(1e9, 1.0) == pytest.approx(1000.0)


def test_roofline_floor_h200():
    peaks = metrics.peaks_for("NVIDIA H200")
    assert peaks.name == "H200" and peaks.bandwidth_gbps == 4800.0
    # softmax 8192x1024 bf16: 2 * 16 MiB = 33554432 bytes at 4.8 TB/s = 6.99 us; flops negligible
    floor = metrics.roofline_floor_ms(5 * 8192 * 1024, 2 * 2 * 8192 * 1024, metrics.compute_peak_tflops(peaks, "bfloat16"), peaks.bandwidth_gbps)
    assert floor == pytest.approx(33554432 / 4.8e12 * 1e3)
    # gemm 4096^3 bf16: 1.374e11 flop at 989.4 TFLOP/s = 0.1389 ms (compute bound)
    g = metrics.roofline_floor_ms(2 * 4096**3, 3 * 2 * 4096**2, 989.4, 4800.0)
    assert g == pytest.approx(2 * 4096**3 / 989.4e12 * 1e3)
    assert metrics.below_roofline(0.5 * g, g) and not metrics.below_roofline(g, g)
    assert metrics.peaks_for("NVIDIA H100 80GB HBM3").name == "H100 SXM"
    assert metrics.peaks_for("Some Future GPU") is None


def test_generous_compute_peak():
    peaks = metrics.peaks_for("NVIDIA H100 80GB HBM3")
    assert metrics.compute_peak_tflops(peaks, "float32") == 494.7  # TF32 allowed
    assert metrics.compute_peak_tflops(peaks, "int32") == 1978.9


def test_performance_score():
    assert metrics.performance_score(False, 5.0, 5.0) == 0
    assert metrics.performance_score(True, 0.8, 0.5) == 1
    assert metrics.performance_score(True, 1.2, 0.5) == 2
    assert metrics.performance_score(True, 0.97, 0.97) == 2  # reference is the expert: independent bonuses
    assert metrics.performance_score(True, 1.01, 0.96) == 3
    assert metrics.performance_score(True, 1.0, 0.95) == 2  # speedup must exceed 1; 0.95 is enough for the expert bonus
    assert metrics.run_performance_score([3, 1], 4) == 1.0
    assert metrics.run_performance_score([3, None], 2) == 1.5  # a task with no score counts 0
    assert metrics.fast_p([(True, 1.5), (True, 0.9), (False, 3.0)], 1.0, 4) == 0.25


def test_summarize_samples():
    s = metrics.summarize_samples([1.0, 2.0, 3.0, 4.0])
    assert s["median_ms"] == 2.5 and s["min_ms"] == 1.0 and s["mean_ms"] == 2.5 and s["n"] == 4
    assert s["iqr_ms"] == pytest.approx(3.25 - 1.75)
    std = math.sqrt(sum((x - 2.5) ** 2 for x in [1, 2, 3, 4]) / 3)
    assert s["rse"] == pytest.approx(std / 2 / 2.5)


def test_bootstrap_ci_brackets_the_ratio():
    lo, hi = metrics.bootstrap_speedup_ci([2.0, 2.1, 1.9, 2.0, 2.05], [1.0, 1.02, 0.98, 1.0, 1.01])
    assert lo <= 2.0 <= hi and hi - lo < 0.3
    assert metrics.bootstrap_speedup_ci([1.0], [1.0]) is None

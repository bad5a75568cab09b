"""autotuning: @triton.autotune with two or more configs; for CUDA, host code in the submission
that times several configurations and picks one (timing + a config loop)."""

from __future__ import annotations

from ._base import absent, present


def detect_triton(facts):
    tuners = [d for d in facts.decorators if d.short == "autotune"]
    if not tuners:
        return absent("no @triton.autotune")
    if facts.n_configs >= 2:
        return present(tuners, f"@triton.autotune over {facts.n_configs} configs")
    return absent(f"@triton.autotune with {facts.n_configs} config(s)", tuners)


def detect_cuda(facts):
    timing = facts.grep_host(r"cudaEventElapsedTime|elapsed_time\(|do_bench|perf_counter|benchmark")
    choose = facts.grep_host(r"(?i)\b(best|fastest|candidates?|configs?)\b")
    if timing and choose:
        return present(timing[:2] + choose[:2], "host code times configurations and picks one")
    return absent("no run-time configuration sweep in the submission")

"""programmatic_dependent_launch: griddepcontrol / cudaGridDependencySynchronize in the kernel,
Triton gdc_wait / gdc_launch_dependents on a live path (constexpr guards are folded by liveness)."""

from __future__ import annotations

from ._base import absent, first, present

CUDA_CALLS = ("cudaGridDependencySynchronize", "cudaTriggerProgrammaticLaunchCompletion", "wait_on_dependent_grids", "launch_dependent_grids", "griddepcontrol_wait", "griddepcontrol_launch_dependents")


def detect_cuda(facts):
    hits = first(facts.grep_asm(r"griddepcontrol"), facts.calls_named(*CUDA_CALLS))
    return present(hits, "device-side PDL control in live code") if hits else absent("no griddepcontrol / PDL calls in the kernel")


def detect_triton(facts):
    hits = [c for c in facts.calls if c.short in ("gdc_wait", "gdc_launch_dependents")]
    return present(hits, "gdc_wait / gdc_launch_dependents on a live path") if hits else absent("no live gdc_* calls")

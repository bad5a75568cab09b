"""programmatic_dependent_launch: PDL (``griddepcontrol``).

## What it means
``griddepcontrol.wait`` / ``launch_dependents`` in the kernel (PTX or
``cudaGridDependencySynchronize``), or the programmatic stream serialization launch attribute;
Triton ``gdc_wait``/``gdc_launch_dependents`` or ``launch_pdl=True``.

## How it is detected
PTX, the CUDA device APIs, host launch attributes; Triton calls and launch keywords.

## Not to be confused with
Calls guarded by a flag that is False at every launch (dead code earns nothing).
"""

from ..facts.expr import Num
from ._base import Rule, Signature, absent, present

RULE = Rule("programmatic_dependent_launch", Signature(ptx=r"\bgriddepcontrol\S*"))


@RULE.cuda
def cuda(f):
    hits = f.asm_matching(r"griddepcontrol") + f.calls_named("cudaGridDependencySynchronize", "cudaTriggerProgrammaticLaunchCompletion", "launch_dependent_grids", "wait_on_dependent_grids")
    if hits:
        return present(hits, "programmatic dependent launch in the kernel")
    if any("ProgrammaticStreamSerialization" in n for n in f.host_names):
        return present([f.loc], "PDL launch attribute in the host code")
    return absent("no programmatic dependent launch")


@RULE.triton
def triton(f):
    hits = [c for c in f.calls if c.short in ("gdc_wait", "gdc_launch_dependents")]
    if hits:
        return present(hits, "gdc_wait / gdc_launch_dependents")
    if any(lf.kwargs.get("launch_pdl") == Num(True) for lf in f.launches):
        return present([lf.loc for lf in f.launches], "launch_pdl=True")
    return absent("no programmatic dependent launch")

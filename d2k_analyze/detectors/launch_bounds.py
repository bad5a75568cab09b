"""launch_bounds: register / occupancy control.

## What it means
``__launch_bounds__`` or ``__maxnreg__`` on the kernel, ``-maxrregcount`` in the submission's
compile flags, or the occupancy API choosing the launch configuration.

## How it is detected
The kernel's attributes; occupancy API calls or register flags in the launching host code.

## Not to be confused with
``cudaFuncSetAttribute(MaxDynamicSharedMemorySize)`` alone.
"""

from ._base import Rule, Signature, absent, present

RULE = Rule("launch_bounds", Signature(ptx=r"\.(?:maxntid|minnctapersm|maxnreg)\b[^\n]*"))


@RULE.cuda
def cuda(f):
    attrs = [a for a in f.attributes if "__launch_bounds__" in a or "__maxnreg__" in a]
    if attrs:
        return present([f.loc], f"kernel attribute {attrs[0][:60]}")
    host = sorted(n for n in f.host_names if n.startswith(("cudaOccupancyMaxActiveBlocksPerMultiprocessor", "cudaOccupancyMaxPotentialBlockSize", "cuOccupancy")))
    if host:
        return present([lf.loc for lf in f.launches][:1] or [f.loc], f"occupancy API in the host code: {host[0]}")
    return absent("no launch bounds or occupancy control")

"""launch_bounds: __launch_bounds__ / __maxnreg__ on the kernel, -maxrregcount in the submission's
compile flags, or the occupancy API choosing the launch configuration."""

from __future__ import annotations

from ._base import absent, first, present


def detect_cuda(facts):
    hits = first(
        [a for a in facts.attributes if "__launch_bounds__" in a.text or "__maxnreg__" in a.text],
        facts.grep_host(r"maxrregcount"),
        facts.grep_host(r"cudaOccupancyMaxActiveBlocksPerMultiprocessor|cudaOccupancyMaxPotentialBlockSize|cudaOccupancyAvailableDynamicSMemPerBlock"),
    )
    return present(hits, "launch bounds / register cap / occupancy API") if hits else absent("no launch bounds or occupancy control")

"""Bootstrap confidence intervals over tasks.

The unit of resampling is the *task slot* of the suite (all ``suite_size`` slots, missing tasks
included as the zeros they count as), because tasks are what a benchmark samples. For a pair of
runs the slots are resampled *jointly* (the same task indices for both runs), so that the interval
of a difference reflects the pairing.

Method: percentile bootstrap. ``n_boot`` resamples of the slots with replacement, drawn from
``random.Random(seed)``; the statistic is recomputed on each; the interval is the 2.5 % and 97.5 %
quantiles (linear interpolation, :func:`d2k_profile.metrics.quantile`) of the resampled values.
Resamples where the statistic is undefined (e.g. a geomean over no correct task) are left out.
The same seed gives the same interval on every machine and Python version (``random`` is a
Mersenne Twister with a documented, stable stream for ``randrange``/``choices``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable, Sequence, TypeVar

from d2k_profile.metrics import quantile

T = TypeVar("T")

DEFAULT_N_BOOT = 2000
DEFAULT_SEED = 0


@dataclass(frozen=True)
class BootstrapConfig:
    n_boot: int = DEFAULT_N_BOOT
    seed: int = DEFAULT_SEED
    level: float = 0.95


def bootstrap_ci(
    slots: Sequence[T], statistic: Callable[[Sequence[T]], float | None], config: BootstrapConfig | None = None
) -> tuple[float, float] | None:
    """Percentile interval of ``statistic`` over resamples of ``slots``; None when fewer than two
    slots or fewer than 10 % of the resamples give a defined value."""
    config = config or BootstrapConfig()
    if len(slots) < 2 or config.n_boot < 1:
        return None
    rng = random.Random(config.seed)
    n = len(slots)
    values = []
    for _ in range(config.n_boot):
        sample = [slots[rng.randrange(n)] for _ in range(n)]
        v = statistic(sample)
        if v is not None:
            values.append(v)
    if len(values) < max(2, config.n_boot // 10):
        return None
    values.sort()
    tail = (1.0 - config.level) / 2
    return quantile(values, tail), quantile(values, 1.0 - tail)

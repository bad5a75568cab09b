"""Analysis worker processes keep the cyclic collector's thresholds raised for their whole life
(``analysis.few_collections`` explains why that is a quarter of the time at default thresholds)."""

from __future__ import annotations

import gc

from d2k_analyze.analysis import RARE_COLLECTIONS
from d2k_analyze.pipeline import _init_worker


def test_the_worker_initializer_raises_the_thresholds_and_they_stay_raised():
    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        _init_worker(None)
        gc.collect()  # a generator-based context entered and dropped would have restored them by now
        assert gc.get_threshold() == RARE_COLLECTIONS
    finally:
        gc.set_threshold(*before)

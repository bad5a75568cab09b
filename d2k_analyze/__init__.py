"""d2k-analyze: static design analysis of CUDA and Triton kernels (never imports the analysed code).

``load_results(path)`` loads a JSON Lines or CSV result file into named pandas DataFrames
(``.submissions``, ``.items``, ``.units``, ``.findings``, ...; see ``docs/results.md``).
"""


def load_results(path):
    """Load d2k-analyze output (JSON Lines or CSV) as :class:`~d2k_analyze.reports.load.ResultTables`
    (pandas imported lazily)."""
    from .reports.load import load_results as _load

    return _load(path)

"""d2k-analyze: static design analysis of CUDA and Triton kernels (never imports the analysed code).

``load_results(path)`` loads a JSON Lines or CSV result file into a pandas DataFrame.
"""


def load_results(path):
    """Load d2k-analyze output (JSON Lines or CSV) as one flat DataFrame (pandas imported lazily)."""
    from .reports.load import load_results as _load

    return _load(path)

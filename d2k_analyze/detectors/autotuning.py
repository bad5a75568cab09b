"""autotuning: a configuration chosen at run time from several candidates.

## What it means
``@triton.autotune`` with more than one config (configs written inline, built by comprehensions
or functions), or in CUDA a sweep in the submission's own host code that times several
configurations and picks one.

## How it is detected
Triton: an ``autotune`` decorator (or wrapper) with two or more configs. CUDA: host code that
times launches with CUDA events, where the launches differ in block, dynamic shared memory or
template arguments.

## Not to be confused with
A single config; offline tuning tables (JSON, YAML) read at run time; a benchmark harness that
times warm-up and measured launches of one configuration; a timed step that launches one
configuration for problems of several sizes (only the grids differ).
"""

from ..facts.expr import Call
from ._base import Rule, absent, present

RULE = Rule("autotuning")


def _tuner(d) -> bool:
    """``triton.autotune(...)``, or a decorator with an autotuner's interface (``configs=`` and
    ``key=``: a library's own subclass of Triton's autotuner)."""
    if not isinstance(d, Call):
        return False
    return d.fn.endswith("autotune") or {"configs", "key"} <= {k for k, _ in d.kw}


@RULE.triton
def triton(f):
    tuners = [d for d in f.decorators if _tuner(d)]
    if not tuners:
        return absent("no autotuner")
    if not f.configs:
        return present([f.loc], "autotuner over configurations built outside this source (a table or a runtime lookup)")
    distinct = {repr(sorted((k, tuple(map(repr, v))) for k, v in cfg.items())) for cfg in f.configs}
    if len(distinct) >= 2 or any(len(v) > 1 for cfg in f.configs for v in cfg.values()):
        return present([f.loc], f"autotuner over {len(f.configs)} config forms")
    return absent("autotune with a single configuration")


def _configuration(lf) -> str:
    """What a launch chooses: block, dynamic shared memory and template arguments. The grid is
    left out: it follows the problem's size, so one launcher called for a 4096-row and a 32000-row
    matrix is the same configuration twice, not two candidates."""
    return repr((lf.block, lf.smem, lf.targs))


@RULE.cuda
def cuda(f):
    names = f.host_names
    if not ({"cudaEventElapsedTime", "cudaEventRecord"} <= names and len(f.launches) >= 2):
        return absent("no run-time configuration sweep")
    by_config: dict[str, list] = {}
    for lf in f.launches:
        by_config.setdefault(_configuration(lf), []).append(lf)
    if len(by_config) < 2:  # a warm-up loop and a timed loop of one launch: a benchmark, not a sweep
        return absent("host code times the kernel, but every launch has the same configuration")
    return present([group[0].loc for group in by_config.values()][:2], "host code times several launch configurations")

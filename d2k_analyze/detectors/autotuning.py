"""autotuning: a configuration chosen at run time from several candidates.

## What it means
``@triton.autotune`` with more than one config (configs written inline, built by comprehensions
or functions), or in CUDA a sweep in the submission's own host code that times several
configurations and picks one.

## How it is detected
Triton: an ``autotune`` decorator (or wrapper) with two or more configs. CUDA: a host-side loop
that launches the kernel and times it with CUDA events.

## Not to be confused with
A single config; offline tuning tables (JSON, YAML) read at run time.
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


@RULE.cuda
def cuda(f):
    names = f.host_names
    if {"cudaEventElapsedTime", "cudaEventRecord"} <= names and len(f.launches) >= 2:
        return present([lf.loc for lf in f.launches][:2], "host code times several launch configurations")
    return absent("no run-time configuration sweep")

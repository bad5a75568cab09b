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

from ..facts.expr import short
from ._base import Rule, absent, present

RULE = Rule("autotuning")


@RULE.triton
def triton(f):
    tuners = [d for d in f.decorators if getattr(d, "fn", "").endswith("autotune")]
    if not tuners:
        return absent("no @triton.autotune")
    n = len(f.configs)
    distinct = {repr(sorted((k, tuple(v)) for k, v in cfg.items())) for cfg in f.configs}
    if n >= 2 and len(distinct) >= 2 or any(len(v) > 1 for cfg in f.configs for v in cfg.values()):
        return present([f.loc], f"@triton.autotune over {n} config forms")
    return absent("autotune with a single configuration")


@RULE.cuda
def cuda(f):
    names = f.host_names
    if {"cudaEventElapsedTime", "cudaEventRecord"} <= names and len(f.launches) >= 2:
        return present([lf.loc for lf in f.launches][:2], "host code times several launch configurations")
    del short
    return absent("no run-time configuration sweep")

"""shape_dispatch: the launch configuration chosen by a rule on the problem's size at run time.

## What it means
The host code compares a problem size (a tensor dimension, a size argument, a quantity computed
from them) with a threshold or another size and launches differently on each side: other tile
sizes, warps, stages or split factor, another grid or block, another template instantiation, or
another kernel (a GEMV below M = 2, a GEMM above). One tuning cannot serve a decode-sized and a
prefill-sized problem alike; a rule per shape regime can.

## How it is detected
From the launches the host code makes, as the interpreter resolved them:
- a launch setting (grid, block, shared memory, template argument, constexpr or launch option)
  whose value is a choice ``c ? x : y`` between different values, where ``c`` compares a value
  derived from the launching function's arguments; or
- a launch made under such a condition when another launch of the same host code is made under
  its negation (``if (m <= 16) small<<<...>>>() else big<<<...>>>()``, or a launch before an early
  return and one after it).
A comparison of a size is an ordering (``<``, ``<=``, ``>``, ``>=``) with a side that depends on
the host function's arguments. Equality tests are not counted: ``elem_bytes == 4`` (a dtype test)
and ``m == 1`` (a GEMV path) look alike, and so do ``n % 8 == 0`` and a pointer's alignment; a
GEMV chosen by ``m == 1`` alone is therefore missed. A clamp (``n < 1 ? 1 : n``) is a formula, and
a comparison with a constant of 2^30 or more guards the index width (int32 or int64 offsets), not
a shape regime; neither counts.

## Not to be confused with
``BLOCK = next_power_of_2(n)`` or ``grid = cdiv(n, BLOCK)`` (a setting computed from the size,
one rule for every shape); a launch skipped for an empty input (``if n > 0``: no other launch);
a choice by dtype, device or a flag (``device.type == "cpu"``, ``if causal``); ``@triton.autotune``
(the ``autotuning`` property: a choice by measurement, not by rule).
"""

from ..facts.expr import Num, Op, atoms, show, walk
from ._base import Rule, absent, present

INDEX_WIDTH = 1 << 30  # thresholds from here up choose int32/int64 offsets, not a tuning

RULE = Rule("shape_dispatch")

_ORDER = {"<", "<=", ">", ">="}


def _from_arguments(e) -> bool:
    """Depends on the launching host function's arguments (sizes, shapes, tensors)."""
    return any(k.startswith("hparam#") for k in atoms(e))


def size_condition(c) -> bool:
    """``c`` orders a size taken from the arguments against another value: ``m < 512``,
    ``n_tiles >= sm_count``; through ``not``, ``and`` and ``or``."""
    if not isinstance(c, Op):
        return False
    if c.op in ("not", "and", "or"):
        return any(size_condition(a) for a in c.args)
    if len(c.args) != 2:
        return False
    a, b = c.args
    if any(isinstance(x, Num) and isinstance(x.v, (int, float)) and abs(x.v) >= INDEX_WIDTH for x in (a, b)):
        return False
    return c.op in _ORDER and (_from_arguments(a) or _from_arguments(b))


def _clamp(choice: Op) -> bool:
    """``n < 1 ? 1 : n``: an arm is the compared size itself, so the choice is a min or max
    (``16 if m <= 16 else 32`` is not: its arms are settings)."""
    c = choice.args[0]
    while isinstance(c, Op) and c.op == "not" and len(c.args) == 1:
        c = c.args[0]
    sizes = {x for x in c.args if atoms(x)} if isinstance(c, Op) and c.op in _ORDER else set()
    return bool({choice.args[1], choice.args[2]} & sizes)


def _settings(lf) -> list:
    values = [*lf.grid, *lf.block, *lf.targs, *lf.kwargs.values()]
    return values + ([lf.smem] if lf.smem is not None else [])


def _chosen_setting(lf):
    """The size condition of the first ``c ? x : y`` with ``x != y`` in a launch setting."""
    for value in _settings(lf):
        for n in walk(value):
            if isinstance(n, Op) and n.op == "?:" and len(n.args) == 3 and n.args[1] != n.args[2] \
                    and size_condition(n.args[0]) and not _clamp(n):
                return n.args[0]
    return None


def _said(c) -> str:
    text = show(c)
    return text if len(text) <= 80 else text[:77] + "..."


@RULE.both
def detect(f):
    for lf in f.launches:
        c = _chosen_setting(lf)
        if c is not None:
            return present([lf.loc], f"a launch setting is chosen by {_said(c)}")
    for lf in f.launches:
        c = next((c for c in lf.exclusive if size_condition(c)), None)
        if c is not None:
            return present([lf.loc], f"this launch or another one is made as {_said(c)} holds or not")
    if not f.launches:
        return absent("no launch in the submission's host code")
    return absent("one launch configuration for every problem size")

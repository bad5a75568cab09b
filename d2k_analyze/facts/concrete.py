"""Evaluating index expressions at concrete points: "which address does lane 5 of warp 0 touch?"

Polynomial forms answer most index questions, but not those hidden behind divisions, modulo,
shifts and XORs (``r = tid / 4; c = tid % 4; x[r * K + c * 8]``). Evaluating the offset for the
32 lanes of a warp, with every other atom fixed at a representative value, answers them for any
arithmetic: consecutive lanes on consecutive vectors is coalesced, whatever the formula.
"""

from __future__ import annotations

from typing import Callable

from .expr import Cast, E, Num, Op, Sym, operators
from .poly import opaque_expr


class Unknown(Exception):
    pass


REPRESENTATIVE = {"bdim.x": 256, "bdim.y": 8, "bdim.z": 1, "gdim.x": 64, "gdim.y": 8, "gdim.z": 1, "bid.x": 3, "bid.y": 2,
                  "bid.z": 1, "pid.0": 3, "pid.1": 2, "pid.2": 1, "nprog.0": 64, "nprog.1": 8, "nprog.2": 1, "tid.y": 0, "tid.z": 0}


def default(key: str) -> int:
    if key in REPRESENTATIVE:
        return REPRESENTATIVE[key]
    if key.startswith(("param#", "cexpr#", "tparam#", "hparam#")):
        return 4096 + 64 * int(key.split("#")[1].split(".")[0] or 0) if key.split("#")[1].split(".")[0].isdigit() else 4096
    if key.startswith(("iter#", "ivar#")):
        return 1
    raise Unknown(key)


def evaluate(e: E, env: dict[str, int]) -> int:
    """The integer value of ``e`` with atoms from ``env`` (others at representative values)."""
    if isinstance(e, Num):
        if isinstance(e.v, bool):
            return int(e.v)
        if isinstance(e.v, int):
            return e.v
        if isinstance(e.v, float) and e.v.is_integer():
            return int(e.v)
        raise Unknown("float")
    if isinstance(e, Sym):
        if e.key in env:
            return env[e.key]
        if e.key == "lane":
            return env.get("tid.x", 0) % 32
        if e.key == "warp":
            return env.get("tid.x", 0) // 32
        if e.key.startswith("~"):
            sub = opaque_expr(e.key)
            if sub is not None:
                return evaluate(sub, env)
        return default(e.key)
    if isinstance(e, Cast):
        return evaluate(e.arg, env)
    if isinstance(e, Op):
        if e.op == "?:":
            return evaluate(e.args[1] if evaluate(e.args[0], env) else e.args[2], env)
        vals = [evaluate(a, env) for a in e.args]
        return _apply(e.op, vals)
    raise Unknown(type(e).__name__)


def _apply(op: str, v: list[int]) -> int:
    try:
        if op == "+":
            return sum(v)
        if op == "*":
            out = 1
            for x in v:
                out *= x
            return out
        a, b = (v + [0])[:2]
        return _OPS[op](a, b, v)
    except (KeyError, ZeroDivisionError, ValueError, OverflowError) as exc:
        raise Unknown(op) from exc


# the other operators of :func:`_apply`, on (first operand, second operand, all operands): built
# once, not as a table of closures per call (it runs for every operator of every lane)
_OPS: dict[str, Callable[[int, int, list[int]], int]] = {
    "-": lambda a, b, v: a - b, "neg": lambda a, b, v: -a, "/": lambda a, b, v: int(a / b) if b else _raise(),
    "//": lambda a, b, v: a // b, "%": lambda a, b, v: a % b, "<<": lambda a, b, v: a << b, ">>": lambda a, b, v: a >> b,
    "&": lambda a, b, v: a & b, "|": lambda a, b, v: a | b, "^": lambda a, b, v: a ^ b, "<": lambda a, b, v: int(a < b),
    "<=": lambda a, b, v: int(a <= b), ">": lambda a, b, v: int(a > b), ">=": lambda a, b, v: int(a >= b),
    "==": lambda a, b, v: int(a == b), "!=": lambda a, b, v: int(a != b), "min": lambda a, b, v: min(v),
    "max": lambda a, b, v: max(v), "and": lambda a, b, v: int(all(v)), "or": lambda a, b, v: int(any(v)),
    "not": lambda a, b, v: int(not a), "~": lambda a, b, v: ~a, "cdiv": lambda a, b, v: -(-a // b),
    "rescale": lambda a, b, v: (a * b) // v[2],
}


def _raise():
    raise Unknown("division by zero")


def lane_offsets(off: E, lanes: int = 32) -> list[int] | None:
    """The offset for lanes 0..31 of the first warp (None when it cannot be evaluated).

    All lanes are evaluated in one pass (:func:`_by_lane`): only the parts of the offset that
    depend on the thread index differ between lanes. Where that pass fails (an operation
    undefined on some lane), each lane is evaluated on its own, as the definition says: a
    lane whose ``?:`` does not take the failing branch still has a value."""
    try:
        v = _by_lane(off, lanes, {})
        return list(v) if isinstance(v, tuple) else [v] * lanes
    except (Unknown, RecursionError):
        if not any(type(n) is Op and n.op == "?:" for n in operators(off)):
            return None  # no branch a lane could avoid: every lane fails the same way
    try:
        return [evaluate(off, {"tid.x": t}) for t in range(lanes)]
    except (Unknown, RecursionError):
        return None


_THREAD_KEYS = ("tid.x", "lane", "warp")


def _by_lane(e: E, lanes: int, memo: dict[int, int | tuple[int, ...]]) -> int | tuple[int, ...]:
    """``e`` for every lane at once: an int where all lanes agree by construction (no thread
    index below), else a tuple with one value per lane. Shared subexpressions are evaluated once."""
    hit = memo.get(id(e))
    if hit is not None:
        return hit
    if isinstance(e, Sym) and e.key in _THREAD_KEYS:
        out: int | tuple[int, ...] = tuple(range(lanes)) if e.key != "warp" else tuple(t // 32 for t in range(lanes))
        if e.key == "lane":
            out = tuple(t % 32 for t in range(lanes))
    elif isinstance(e, Sym) and e.key.startswith("~") and opaque_expr(e.key) is not None:
        out = _by_lane(opaque_expr(e.key), lanes, memo)  # type: ignore[arg-type]
    elif isinstance(e, Cast):
        out = _by_lane(e.arg, lanes, memo)
    elif isinstance(e, Op):
        vals = [_by_lane(a, lanes, memo) for a in e.args]
        if not any(isinstance(v, tuple) for v in vals):
            out = _apply(e.op, vals) if e.op != "?:" else vals[1] if vals[0] else vals[2]  # type: ignore[assignment]
        elif e.op == "?:":
            cols = [v if isinstance(v, tuple) else (v,) * lanes for v in vals]
            out = tuple(b if c else d for c, b, d in zip(*cols))
        else:
            cols = [v if isinstance(v, tuple) else (v,) * lanes for v in vals]
            out = tuple(_apply(e.op, list(row)) for row in zip(*cols))
    else:
        out = evaluate(e, {})
    memo[id(e)] = out
    return out

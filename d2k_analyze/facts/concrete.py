"""Evaluating index expressions at concrete points: "which address does lane 5 of warp 0 touch?"

Polynomial forms answer most index questions, but not those hidden behind divisions, modulo,
shifts and XORs (``r = tid / 4; c = tid % 4; x[r * K + c * 8]``). Evaluating the offset for the
32 lanes of a warp, with every other atom fixed at a representative value, answers them for any
arithmetic: consecutive lanes on consecutive vectors is coalesced, whatever the formula.
"""

from __future__ import annotations

from .expr import Cast, E, Num, Op, Sym
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
        return {
            "-": lambda: a - b, "neg": lambda: -a, "/": lambda: int(a / b) if b else _raise(), "//": lambda: a // b,
            "%": lambda: a % b, "<<": lambda: a << b, ">>": lambda: a >> b, "&": lambda: a & b, "|": lambda: a | b,
            "^": lambda: a ^ b, "<": lambda: int(a < b), "<=": lambda: int(a <= b), ">": lambda: int(a > b),
            ">=": lambda: int(a >= b), "==": lambda: int(a == b), "!=": lambda: int(a != b), "min": lambda: min(v),
            "max": lambda: max(v), "and": lambda: int(all(v)), "or": lambda: int(any(v)), "not": lambda: int(not a),
            "~": lambda: ~a, "cdiv": lambda: -(-a // b), "rescale": lambda: (a * b) // v[2],
        }[op]()
    except (KeyError, ZeroDivisionError, ValueError, OverflowError) as exc:
        raise Unknown(op) from exc


def _raise():
    raise Unknown("division by zero")


def lane_offsets(off: E, lanes: int = 32) -> list[int] | None:
    """The offset for lanes 0..31 of the first warp (None when it cannot be evaluated)."""
    try:
        return [evaluate(off, {"tid.x": t}) for t in range(lanes)]
    except (Unknown, RecursionError):
        return None

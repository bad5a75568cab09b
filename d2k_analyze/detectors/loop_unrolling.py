"""loop_unrolling: unrolling the source asks for.

## What it means
An explicit ``#pragma unroll`` (also through macros: ``_Pragma("unroll")``), ``tl.static_range``
or ``tl.range(..., loop_unroll_factor>1)``, or manual unrolling (the same update repeated with
constant offsets instead of a loop).

## How it is detected
Pragmas attached to live loops (``unroll 1`` and ``nounroll`` do not count) whose trip count is
known when the kernel is built: constants, template and constexpr parameters, and names no file
defines that the kernel also uses as array extents (an ``nvcc -D`` flag); a pragma with a factor
unrolls any loop. Triton loops over
``tl.static_range`` or with an unroll factor; for manual unrolling, three or more assignments
to the same storage with the same offset form whose values are the same update (one expression
shape, constants aside) and whose constant offsets differ, in where they write or in where
their value reads (an unrolled tree ``s[t] += s[t + 128]; s[t] += s[t + 64]; ...``), one
library call issued with three different constant arguments (a shuffle ladder written out), or
a loop stepped by a constant S >= 3 whose body reaches one object at S consecutive values of its
variable (``k += 4`` with tiles ``k + 3`` ... ``k + 6``: four iterations in one body).
Source lines play no part: the same code on one line or on many reads the same.

## Not to be confused with
What the compiler unrolls by itself; a pragma in a comment or a dead branch; a vector's members
unpacked into an array (``f[0] = v.x; f[1] = v.y; ...``: different values, not one update); the
many outputs of one inline-asm instruction (``wgmma`` writing ``d[0]`` ... ``d[31]``).
"""

from ..facts import poly as P
from ..facts.expr import Load, Num, Sym, atoms, num, walk
from ._base import Rule, absent, present

RULE = Rule("loop_unrolling")


def _unrolls(pragma: str) -> bool:
    """``unroll``, ``unroll 4``, ``unroll(8)``, ``GCC unroll 4``; not ``unroll 1`` or ``nounroll``."""
    words = pragma.replace("(", " ").replace(")", " ").split()
    if words[:1] == ["GCC"]:
        words = words[1:]
    if not words or words[0] != "unroll":
        return False
    return len(words) == 1 or words[1] not in ("0", "1")


def _compile_time(e, extents: set[str]) -> bool:
    """Known when the kernel is compiled: constants, template / constexpr parameters, qualified
    names the interpreter could not see (``Traits::kNElts``: static members), and unseen names the
    kernel also uses as array extents (``float state[_N_]``: a build flag)."""
    return e is not None and all(k.startswith(("tparam#", "cexpr#")) or (k.startswith("lib:") and "." in k) or k in extents
                                 for k in atoms(e))


def _factor(pragma: str) -> int | None:
    words = pragma.replace("(", " ").replace(")", " ").split()
    words = words[1:] if words[:1] == ["GCC"] else words
    return int(words[1]) if len(words) > 1 and words[1].isdigit() else None


def _effective(lp, pragma: str, extents: set[str]) -> bool:
    """A full ``#pragma unroll`` needs a trip count known at compile time (it does nothing on a
    runtime-bound loop); a pragma with a factor (``unroll 4``) unrolls any loop."""
    if not _unrolls(pragma):
        return False
    if (_factor(pragma) or 0) > 1:
        return True
    if lp.trips is not None:
        return True
    # an additive step, or a halving / doubling one (``for (o = 16; o > 0; o >>= 1)``), known when compiled
    step = lp.step if lp.update == "add" else lp.factor if lp.update in ("shr", "mul", "div") else None
    return all(_compile_time(x, extents) for x in (lp.init, lp.bound, step))


@RULE.cuda
def cuda(f):
    extents = f.extent_names()
    hits = [lp for lp in f.loops.values() if any(_effective(lp, p, extents) for p in lp.pragmas)]
    if hits:
        return present(hits, "#pragma unroll on live loops")
    manual = _manual(f)
    if manual:
        return present(manual, "manually unrolled: the same update repeated at constant offsets")
    return absent("no explicit unrolling")


def _manual(f):
    """Straight-line repetition: accesses to one object whose offsets differ only by constants,
    or the same library operation issued three or more times with constant arguments that
    differ (a shuffle ladder 16, 8, 4, 2, 1 written out)."""
    calls: dict[tuple, list] = {}
    for c in f.calls:
        consts = tuple(a.v for a in c.call.args if isinstance(a, Num) and not isinstance(a.v, bool))
        if consts:
            calls.setdefault((c.fn, c.loops, len(c.call.args)), []).append((consts, c))
    for group in calls.values():
        if len({cs for cs, _ in group}) >= 3:
            return [c for _, c in group][:3]
    groups: dict[tuple, list] = {}
    for a in f.accesses:
        if a.kind not in ("rmw", "store") or a.via == "asm":
            continue  # the outputs of one asm statement (an MMA's 32 accumulators) are one instruction
        p = a.poly
        base = tuple((m, c) for m, c in p if m != ())
        groups.setdefault((a.obj, a.loops, base, a.kind), []).append(a)
    for accs in groups.values():
        by_shape: dict[tuple, list] = {}
        for acc in accs:
            by_shape.setdefault(_shape(acc.value), []).append(acc)
        for same in by_shape.values():
            consts = {_constants(f, acc) for acc in same}
            if len(consts) >= 3:
                return same[:3]
    return _stepped_copies(f)


def _stepped_copies(f) -> list:
    """A loop stepped by a constant S >= 3 whose body touches one object at S consecutive
    positions of its variable (``for (k = 0; k < n; k += 4)`` with tiles ``k + 3``, ``k + 4``,
    ``k + 5``, ``k + 6``): S iterations written out as one, whatever helpers the copies call."""
    for lp in f.loops.values():
        step = num(lp.step) if lp.update == "add" else None
        if not isinstance(step, int) or step < 3:
            continue
        key = f"iter#{lp.id}"
        groups: dict[tuple, dict] = {}
        for a in f.accesses:
            if lp.id not in a.loops or a.space not in ("global", "shared"):
                continue
            per_iter = P.constant_of(P.coeff(a.poly, key))
            const = P.constant_of(tuple((m, c) for m, c in a.poly if m == ())) or 0
            if not per_iter:
                continue
            unit = abs(per_iter) / step  # the offset of one step of the variable
            phase = (const % abs(per_iter)) / unit
            if phase == int(phase):
                groups.setdefault((a.obj, a.kind, per_iter), {}).setdefault(int(phase), a)
        for phases in groups.values():
            if len(phases) >= step:
                return list(phases.values())[:3]
    return []


def _constants(f, acc) -> tuple:
    """The constant parts of an update's offsets: where it writes and where its value reads.
    ``s[t] += s[t + 256]; s[t] += s[t + 128]; s[t] += s[t + 64]`` writes one place and reads
    three: a reduction loop written out."""
    def const(poly):
        return P.constant_of(tuple((m, c) for m, c in poly if m == ()))

    reads = tuple(const(f.accesses[n.access].poly) for n in walk(acc.value) if isinstance(n, Load) and n.access < len(f.accesses)) \
        if acc.value is not None else ()
    return (const(acc.poly),) + reads


def _shape(e) -> tuple:
    """An expression with its constants and load identities left out: ``acc[1] += a[1] * b`` and
    ``acc[2] += a[2] * b`` share a shape (one update repeated), ``f[0] = v.x`` and ``f[1] = v.y``
    do not (an unpack of a vector's members, not a loop written out)."""
    if e is None:
        return ()
    out = []
    for n in walk(e):
        if isinstance(n, Num):
            out.append("num")
        elif isinstance(n, Sym):
            out.append(n.key.split("#")[0])
        elif isinstance(n, Load):
            out.append(("load", n.space))
        else:
            out.append((type(n).__name__, getattr(n, "op", None), getattr(n, "fn", None), getattr(n, "name", None)))
    return tuple(out)


@RULE.triton
def triton(f):
    hits = [lp for lp in f.loops.values() if lp.iterator == "tl.static_range"]
    hits += [lp for lp in f.loops.values() if isinstance(num(lp.kwargs.get("loop_unroll_factor")), int) and num(lp.kwargs["loop_unroll_factor"]) > 1]
    return present(hits, "tl.static_range / loop_unroll_factor") if hits else absent("no explicit unrolling")

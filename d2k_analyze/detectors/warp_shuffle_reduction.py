"""warp_shuffle_reduction: reducing across a warp's lanes with register shuffles.

## What it means
``__shfl_xor_sync`` / ``__shfl_down_sync`` (or cooperative-groups ``shfl_*``, ``cg::reduce``,
``__reduce_*_sync``, PTX ``shfl.sync`` / ``redux.sync``) whose result is combined with the value
that was shuffled (sum, max, min, a functor), usually in a halving loop or unrolled.

## How it is detected
A value computed as ``op(v, shuffle(v, offset))``: the shuffled operand and the combined
operand are the same value (a loop-carried local, a helper's parameter, or one memory location
read twice through a pointer), whatever it is called; or a library warp-reduce call.

## Not to be confused with
A shuffle used only to broadcast one lane's value (``__shfl_sync(mask, v, 0)``).
"""

from ..facts.expr import Call, Op, subtree_has, walk
from ..compiled.ttgir import Reading, TritonIR
from ._base import Rule, Signature, absent, not_applicable, present
from ._queries import REDUCING_SHUFFLES, SHUFFLES, is_call, located, triton_reductions

def _compiled(ir: TritonIR) -> Reading:
    """Triton: a tt.reduce across lanes lowers to butterfly shuffles (or redux.sync)."""
    if not ir.reduces():
        return Reading(None, (), "no tt.reduce")
    found = ir.lines(r"\b(?:shfl\.sync\.(?:bfly|down|up)|redux\.sync)\S*")
    if found:
        return Reading(True, found, "reductions across lanes use warp shuffles")
    return Reading(False, ir.lines(r'"tt\.reduce"', "ttgir", 1), "every reduction stays inside a thread")


RULE = Rule("warp_shuffle_reduction", Signature(ptx=r"\b(?:shfl\.sync|redux\.sync)\S*", sass=r"\b(?:SHFL|REDUX)\S*", refutes=True,
                                                triton=_compiled))
WARP_REDUCE_CALLS = ("cg.reduce", "reduce", "__reduce_add_sync", "__reduce_max_sync", "__reduce_min_sync", "__reduce_or_sync", "WarpReduce")


def shuffle_reductions(f) -> list:
    """Assignments whose value combines a shuffled copy of a value with that value itself."""
    cached = f.cache.get("shuffle_reductions")
    if cached is None:
        # a combination with a shuffled copy holds a shuffle: the memoised test skips the rest at once
        cached = [a for a in f.assigns if _has_shuffle(a.new) and (_combines_with_shuffle(a.new) or _combines_with_shuffle(located(f, a.new)))]
        f.cache["shuffle_reductions"] = cached
    return cached


# whether a value holds a shuffle anywhere (memoised per node)
_has_shuffle = subtree_has(lambda n: is_call(n, SHUFFLES))


def _combines_with_shuffle(e) -> bool:
    for n in walk(e):
        if not isinstance(n, (Op, Call)) or len(n.args) < 2 or is_call(n, SHUFFLES):
            continue
        for s in n.args:
            if is_call(s, SHUFFLES) and len(s.args) >= 2:
                shuffled = s.args[1] if len(s.args) >= 3 else s.args[0]  # (mask, v, offset) or legacy (v, offset)
                if _holds(n, s, shuffled) and (is_call(s, REDUCING_SHUFFLES) or len(s.args) >= 3):
                    return True
    return False


def _holds(n, shuffle, shuffled) -> bool:
    """``n`` combines ``shuffled`` itself beside its shuffle: one of its operands, or, for a sum
    (or max, min) that the value algebra flattened, all of the shuffled sum's terms among the
    other operands (``v = a * b + acc; v + shfl(v)`` is stored as ``shfl(v) + a * b + acc``)."""
    if shuffled in n.args:
        return True
    if not isinstance(n, Op) or n.op not in ("+", "max", "min") or not isinstance(shuffled, Op) or shuffled.op != n.op:
        return False
    rest = [a for a in n.args if a is not shuffle]
    return all(term in rest for term in shuffled.args)


@RULE.cuda
def cuda(f):
    hits = shuffle_reductions(f)
    if hits:
        return present(hits, "values combined with their shuffled copies across lanes")
    lib = [c for c in f.calls if c.fn in WARP_REDUCE_CALLS or c.short in ("__reduce_add_sync", "__reduce_max_sync", "__reduce_min_sync")]
    lib += [c for c in f.calls if c.fn.startswith("cg.") and c.short == "reduce"]
    lib += f.asm_matching(r"redux\.sync")
    if lib:
        return present(lib, "warp reduction primitive")
    if any("WarpReduce" in n for n in f.lib_names):
        return present([f.loc], "cub::WarpReduce")
    return absent("no shuffle reduction")


@RULE.triton
def triton(f):
    if triton_reductions(f):
        return not_applicable("tl reductions: the compiler chooses the lowering")
    return absent("no reduction")

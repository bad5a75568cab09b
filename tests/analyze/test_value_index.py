"""The operation index answers what a walk of every kept value answers.

``ops.containing`` finds the kept values holding a node that satisfies a predicate by walking up
from the matching nodes (each distinct node is listed once, with the nodes built on it), not by
listing every value's whole tree. Here it is checked against the definition, a walk of each
value, on random values that share subtrees the way interpreted values do, including values
that are themselves matching nodes, values shared by several assignments, and missing values."""

from __future__ import annotations

import random

import pytest

from d2k_analyze.facts import ops
from d2k_analyze.facts.expr import Call, Load, Num, Op, Sym, walk
from d2k_analyze.facts.ir import Loc
from d2k_analyze.facts.kernel import Assignment, KernelFacts

LOC = Loc("k.py", 1, 1)


def _facts(seed: int) -> KernelFacts:
    rng = random.Random(seed)
    pool = [Sym(f"s{i}") for i in range(4)] + [Load(i, "global", i) for i in range(3)] + [Num(0)]
    f = KernelFacts("k", "triton", "k.py", LOC)
    for _ in range(120):
        a, b = rng.choice(pool), rng.choice(pool)
        node = rng.choice([Op("+", (a, b)), Op("*", (a, b)), Call("tl.exp", (a,)), Op("max", (a, Num(0))), Call("tl.log", (b,))])
        pool.append(node)
        value = rng.choice([node, node, rng.choice(pool), None])  # shared values and missing ones too
        f.assigns.append(Assignment(LOC, len(f.assigns), None, "=", node, None, value, (), ()))
    return f


def _by_walk(f: KernelFacts, pred, heads) -> list:
    def head(n):
        return n.op if isinstance(n, Op) else n.fn.rsplit(".", 1)[-1]

    return [rec for rec, v in ops.values(f) if v is not None and any(
        isinstance(n, (Op, Call)) and head(n) in heads and pred(n) for n in walk(v))]


@pytest.mark.parametrize("seed", range(5))
def test_containing_finds_the_values_a_walk_finds(seed):
    f = _facts(seed)
    cases = [
        (lambda n: True, {"+"}),
        (lambda n: any(isinstance(x, Load) and x.obj == 1 for x in n.args), {"*", "exp"}),
        (lambda n: True, {"log"}),
        (lambda n: False, {"+", "*"}),
        (lambda n: True, {"no such head"}),
    ]
    found_some = False
    for pred, heads in cases:
        got = ops.containing(f, pred, heads)
        assert got == _by_walk(f, pred, heads)
        found_some |= bool(got) and len(got) < len(f.assigns)
        assert ops.holds(f, pred, heads) == bool(got)
    assert found_some  # the values exercise partial answers, not only all or nothing

"""The memoised expression queries answer exactly what a plain walk of the tree answers.

They exist for speed (``benchmarks/analyze_throughput.py``): each is built from its children's
memoised answers, so a value made of values already asked about costs one step. Here every one
is checked against the definition it replaces, on random trees that share subtrees the way
interpreted values do, and on a chain too deep to recurse."""

from __future__ import annotations

import random

import pytest

from d2k_analyze.facts import expr as X
from d2k_analyze.facts.expr import (Attr, Call, Cast, Index, Load, Name, Num, Op, Ptr, Str, Sym, Tup, TypeRef, atoms,
                                    forget_nodes, has_within, order_key, rewrite, subtree_has, walk)


def _leaf(rng: random.Random):
    return rng.choice([
        lambda: Num(rng.randint(-3, 9)), lambda: Num(rng.random()), lambda: Num(True), lambda: Str("s'q"),
        lambda: Sym(rng.choice(["tid.x", "bid.y", "param#2"]), frozenset(rng.sample(["a", "b", "c"], rng.randint(0, 2)))),
        lambda: Load(rng.randint(0, 3), rng.choice(["global", "shared"]), rng.randint(0, 9)), lambda: TypeRef("float4"),
        lambda: Name("x"),
    ])()


def _trees(seed: int, n: int = 300) -> list:
    """Values built from earlier values (shared subtrees, as the interpreter makes them)."""
    rng = random.Random(seed)
    pool = [_leaf(rng) for _ in range(8)]
    for _ in range(n):
        a, b = rng.choice(pool), (_leaf(rng) if rng.random() < 0.3 else rng.choice(pool))
        pool.append(rng.choice([
            lambda: Op(rng.choice(["+", "*", "-", "max"]), (a, b)),
            lambda: Op("neg", (a,)),
            lambda: Call(rng.choice(["__shfl_up_sync", "expf", "tl.sum", "cute.make_smem_ptr"]), (a, b), (("axis", Num(1)),), (TypeRef("T"),)),
            lambda: Index(a, (b,)), lambda: Attr(a, "x"), lambda: Cast("float", a), lambda: Tup((a, b, a)),
            lambda: Ptr(rng.randint(0, 3), "float", a, (b,)),
        ])())
    return pool


def _walked_atoms(e) -> frozenset:
    out = set()
    for n in walk(e):
        if isinstance(n, Sym):
            out |= n.deps | {n.key}
        elif isinstance(n, Load):
            out |= {"load:" + n.space, f"obj#{n.obj}"}
        elif isinstance(n, Ptr):
            out.add(f"obj#{n.obj}")
        elif isinstance(n, Call) and X.short(n.fn) in X.SPACE_MARKERS:
            out.add(X.SPACE_MARKERS[X.short(n.fn)])
    return frozenset(out)


@pytest.mark.parametrize("seed", range(4))
def test_sort_key_is_the_text_of_the_value(seed):
    for e in _trees(seed):
        assert order_key(e) == repr(e)


@pytest.mark.parametrize("seed", range(4))
def test_atoms_from_the_children_equal_the_atoms_of_a_walk(seed):
    for e in _trees(seed):
        assert atoms(e) == _walked_atoms(e)


@pytest.mark.parametrize("seed", range(4))
def test_subtree_has_answers_like_any_over_a_walk(seed):
    def up(n):
        return isinstance(n, Call) and n.fn == "__shfl_up_sync"

    def product(n):
        return isinstance(n, Op) and n.op == "*"

    for pred in (up, product):
        has = subtree_has(pred)
        trees = _trees(seed)
        answers = [has(e) for e in trees]
        assert answers == [any(pred(n) for n in walk(e)) for e in trees]
        assert any(answers) and not all(answers)  # the trees exercise both answers


@pytest.mark.parametrize("seed", range(4))
def test_has_within_answers_like_any_over_a_walk_with_the_callers_memo(seed):
    # a predicate that reads more than the node (a set chosen per kernel), one memo per set
    seen = set()
    for wanted in ({"a"}, {"c", "param#2"}, {"bid.y"}):
        def hit(n, wanted=wanted):
            return isinstance(n, Sym) and (n.key in wanted or bool(n.deps & wanted))

        memo: dict = {}
        trees = _trees(seed)
        answers = [has_within(e, hit, memo) for e in trees]
        assert answers == [any(hit(n) for n in walk(e)) for e in trees]
        assert answers == [has_within(e, hit, memo) for e in trees]  # asked again: from the memo
        seen |= set(answers)
    assert seen == {True, False}  # the trees exercise both answers


def test_has_within_walks_a_chain_too_deep_to_recurse():
    deep = Sym("tid.x")
    for i in range(5000):
        deep = Op("+", (deep, Sym("k") if i == 4000 else Num(i)))
    assert has_within(deep, lambda n: isinstance(n, Sym) and n.key == "k", {})
    assert not has_within(deep, lambda n: isinstance(n, Sym) and n.key == "absent", {})


@pytest.mark.parametrize("seed", range(4))
def test_rewrite_with_a_memo_builds_the_same_values_and_shares_them(seed):
    def loc(n):
        return Sym(f"at:{n.obj}:{n.access}") if isinstance(n, Load) else n

    memo: dict = {}
    trees = _trees(seed)
    for e in trees:
        assert rewrite(e, loc, memo) == rewrite(e, loc)
    shared = trees[-1]
    assert rewrite(shared, loc, memo) is rewrite(shared, loc, memo)  # rebuilt once


def test_a_chain_too_deep_to_recurse_is_walked_instead():
    deep = Sym("tid.x")
    for i in range(5000):
        deep = Op("+", (deep, Load(i % 3, "global", i) if i == 4000 else Num(i)))
    assert subtree_has(lambda n: isinstance(n, Load))(deep)
    assert atoms(deep) == _walked_atoms(deep)


def test_forgetting_empties_every_memo_and_answers_stay_right():
    e = _trees(9)[-1]
    before = (atoms(e), order_key(e))
    assert any(X._MEMOS)
    forget_nodes()
    assert not any(X._MEMOS)
    assert (atoms(e), order_key(e)) == before

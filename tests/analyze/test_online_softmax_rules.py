"""The running-max algebra the online_softmax detector relies on, on values as the fact layer
writes them (a row max taken by a loop is ``max(<last element>, <carried>)``)."""

from d2k_analyze.detectors.online_softmax import _is_max_of, rescale_exps
from d2k_analyze.facts.expr import Call, Op, Sym


def _m(*terms):
    return Op("max", tuple(terms))


def test_a_max_over_part_of_the_terms_is_below_the_whole_max():
    old, tile_last, carried = Sym("old"), Sym("tile_last"), Sym("carried#1")
    tile_max = _m(tile_last, carried)  # the tile's own max, as a loop leaves it
    new_max = _m(tile_last, old, carried)  # max(old, tile_max), flattened
    assert _is_max_of(new_max, tile_max)
    assert _is_max_of(new_max, old)
    # exp(tile_max - new_max) is a rescale to the new maximum
    assert rescale_exps(Call("exp", (Op("-", (tile_max, new_max)),)))


def test_a_max_over_other_terms_is_not():
    a, b, c = Sym("a"), Sym("b"), Sym("c")
    assert not _is_max_of(_m(a, b), _m(a, c))  # c is not among max(a, b)'s terms
    assert not _is_max_of(_m(a, b), _m(a, b))  # the same max is not a part of itself
    assert not rescale_exps(Call("exp", (Op("-", (_m(a, c), _m(a, b))),)))

"""warp_aggregated_atomics: lanes that hit the same address combine, one lane issues the atomic.

## What it means
A warp vote finds the lanes that would update the same address (``__match_any_sync`` on the key,
or ``__ballot_sync`` / ``__activemask`` for all active lanes, or a cooperative-groups coalesced
group), and one leader adds the group's size (``__popc`` of the mask) in one atomic.

## How it is detected
CUDA: an atomic whose added value is the population count of a warp vote's mask (followed through
locals), or the ``size()`` of a coalesced group when the kernel forms one. Triton: no warp votes
exist, so never.

## Not to be confused with
One atomic per lane; a warp reduction followed by one atomic at a fixed address (no grouping by
key); votes that only steer control flow.
"""

from ..facts.expr import Call, walk
from ._base import Rule, absent, present
from ._queries import expand, is_call

RULE = Rule("warp_aggregated_atomics")
VOTES = frozenset({"__match_any_sync", "__match_all_sync", "__ballot_sync", "__activemask", "__ballot", "match_any", "ballot"})
POPC = frozenset({"__popc", "__popcll", "popc"})
GROUPS = frozenset({"coalesced_threads", "labeled_partition"})


def _popc_of_vote(f, e) -> bool:
    for x in expand(f, e, 3):
        for n in walk(x):
            if is_call(n, POPC) and any(is_call(m, VOTES) for a in n.args for y in expand(f, a, 3) for m in walk(y)):
                return True
    return False


def _group_size(f, e) -> bool:
    if not any(c.short in GROUPS for c in f.calls):
        return False
    return any(isinstance(n, Call) and n.fn.split(".")[-1] in ("size", "num_threads") for x in expand(f, e, 3) for n in walk(x))


@RULE.cuda
def cuda(f):
    for a in f.accesses:
        if a.kind == "atomic" and a.value is not None and (_popc_of_vote(f, a.value) or _group_size(f, a.value)):
            return present([a], "one atomic adds the popcount of a warp vote (lanes aggregated)")
    return absent("no warp-aggregated atomic")


@RULE.triton
def triton(f):
    return absent("Triton has no warp votes")

"""Resolved values are structural: equal trees are equal keys, in any process, and the
vectorised lane evaluation agrees with evaluating each lane on its own."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys

from d2k_analyze.facts.concrete import evaluate, lane_offsets, Unknown
from d2k_analyze.facts.expr import Call, Cast, Num, Op, Sym


def _tree():
    tid = Sym("tid.x")
    row = Op("//", (tid, Num(4)))
    col = Op("%", (tid, Num(4)))
    return Op("+", (Op("*", (row, Sym("param#3"))), Op("*", (col, Num(8))), Call("tl.arange", (Num(0), Num(4)))))


def test_equal_trees_hash_alike_and_stay_keys_after_pickling_in_another_process():
    here = _tree()
    assert here == _tree() and hash(here) == hash(_tree())
    # a tree hashed in a process with other string hashes, pickled, then used as a key here
    code = ("import pickle, sys; sys.path.insert(0, %r); from tests.analyze.test_fact_values import _tree; t = _tree(); hash(t); "
            "sys.stdout.buffer.write(pickle.dumps(t))") % os.getcwd()
    blob = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True, env={**os.environ, "PYTHONHASHSEED": "12345"}).stdout
    there = pickle.loads(blob)
    assert there == here
    assert {here: "found"}.get(there) == "found"


def _each_lane(off):
    try:
        return [evaluate(off, {"tid.x": t}) for t in range(32)]
    except Unknown:
        return None


def test_lane_offsets_match_per_lane_evaluation():
    tid, lane = Sym("tid.x"), Sym("lane")
    cases = [
        Op("+", (Op("*", (Sym("bid.x"), Sym("bdim.x"))), tid)),                      # contiguous
        Op("*", (tid, Sym("param#1"))),                                             # strided by a row length
        Op("+", (Op("*", (Op("//", (tid, Num(8))), Num(64))), Op("%", (tid, Num(8))))),
        Op("^", (lane, Op(">>", (tid, Num(2))))),                                  # xor swizzle
        Cast("int", Op("*", (Op("//", (tid, Num(32))), Num(128)))),                 # warp index
        # a lane-dependent select whose untaken branch divides by zero on lane 0
        Op("?:", (Op(">", (tid, Num(0))), Op("//", (Num(64), tid)), Num(7))),
        Op("+", (tid, Num(0.5))),                                                   # not an integer: unknown
        Num(5),                                                                     # broadcast
        Op("?:", (Op("<", (tid, Num(16))), tid, Op("+", (tid, Num(100))))),          # half-warp split
    ]
    for off in cases:
        assert lane_offsets(off) == _each_lane(off), off
    assert lane_offsets(cases[5])[:3] == [7, 64, 32]
    assert lane_offsets(cases[6]) is None
    assert lane_offsets(cases[7]) == [5] * 32
    assert lane_offsets(cases[8])[15:17] == [15, 116]

"""Macro substitution keeps the preprocessor's order of steps: stringize, bind parameters (whole
words only), then paste. The fast paths (no regex pass when a body has no ``#`` or the bound text
no ``##``; a body cut into words once and bound at every invocation) must give the same text."""

from __future__ import annotations

from d2k_analyze.parsing.macros import collect, expand


def _expanded(source: str) -> str:
    return expand(source, collect([source])).splitlines()[-1]


def test_paste_that_arrives_through_an_argument_is_applied():
    # the body has no '##'; the argument brings one, and pasting runs after binding
    assert _expanded("#define ID(x) x\nID(a ## b)") == "ab"


def test_stringize_paste_and_whole_word_binding():
    src = "#define S(x) #x\n#define P(a) a ## _t\n#define W(n) n + nx + x_n\nS(he\"y) P(int) W(1)"
    assert _expanded(src) == '"he\\"y" int_t 1 + nx + x_n'


def test_object_like_and_parameterless_macros():
    src = "#define BM 128\n#define ZERO() 0\nint a = BM + ZERO();"
    assert _expanded(src) == "int a = 128 + 0;"

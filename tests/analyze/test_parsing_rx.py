"""The regex helpers' literal prefilter never changes an answer: rx.search / match / fullmatch /
findall agree with ``re`` on every pattern and text, including case-insensitive patterns,
non-ASCII case folds, anchors and lookarounds."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from d2k_analyze.parsing import rx

PATTERNS = [
    r"(?i)\b(residual|res_ptr|skip)\w*\b",
    r"(?i)status|flag|aggregate|inclusive|look_?back",
    r"\b(__expf|expf|exp2f|exp|tl\.exp2?)\s*\(",
    r"(?:fmaxf|tl\.max(?:imum)?|\bmax)\s*\(",
    r"^(SM80_CP_ASYNC\w*|SM90_TMA_LOAD\w*)$",
    r"(?i)^(warp_?id|warp_?idx|warpid|wid|warp)$",
    r"(?<![\w.])acc\b\s*\+=",
    r"x{2,}(?:ab|cd)+",
    r"(?=abc)x|y(?!z)",
    r"[^a]bc|a|b",
    r"(?i:KE)y",
    r"s+k",
    r"\bvolatile\b",
    r"a*b?",
]
ALPHABET = "abcdxyzkKsSeEpP_ (){}.+=\n\u212a\u017f"  # includes the Kelvin sign and the long s


@pytest.mark.parametrize(
    "pattern,words",
    [
        (r"(?i)status|flag", (("flag", "status"), True)),
        (r"\bvolatile\b", (("volatile",), False)),
        (r"(foo)+bar", (("foo",), False)),  # either word is required; the first found is kept
        (r"x*y?", None),
        (r"(?i)é|x", None),  # a non-ASCII word compared lowercased: no prefilter
    ],
)
def test_required_literals(pattern, words):
    assert rx.required_literals(pattern) == words


def _same(pattern: str, text: str) -> None:
    m1, m2 = rx.search(pattern, text), re.search(pattern, text)
    assert (m1 and m1.span()) == (m2 and m2.span())
    assert bool(rx.match(pattern, text)) == bool(re.match(pattern, text))
    assert bool(rx.fullmatch(pattern, text)) == bool(re.fullmatch(pattern, text))
    assert rx.findall(pattern, text) == re.findall(pattern, text)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(PATTERNS), st.text(alphabet=ALPHABET, max_size=40))
def test_prefilter_agrees_with_re_on_random_text(pattern, text):
    _same(pattern, text)


@pytest.mark.parametrize("pattern", PATTERNS)
def test_prefilter_agrees_with_re_on_pattern_words(pattern):
    """Texts built from the pattern's own words (the case the prefilter lets through)."""
    req = rx.required_literals(pattern)
    for word in req[0] if req else ("",):
        for text in (word, word.upper(), f" {word}(", f"x{word}_y", "\u212a" + word, word + "\n" + word):
            _same(pattern, text)

"""Regular expressions with a large compile cache.

Detectors build small patterns around the names they find (``\\bacc\\s*\\+=``); with ``re``'s own
512-entry cache those evict each other and recompiling dominates the run time. Same signatures as
the ``re`` functions they wrap.

The functions also skip the regex engine when the text cannot match: most patterns here are
alternations of words (``(?i)status|flag|aggregate``) that ``re`` tries at every position of a
unit's text, while a substring test for the words every match must contain is done in C. The
words are derived from the parsed pattern (:func:`required_literals`); when none can be derived
the regex runs as before, so results are the same either way.
"""

from __future__ import annotations

import re
from functools import lru_cache

try:  # the regex parser of the standard library (``sre_parse``); without it, no prefilter
    from re import _constants as _C
    from re import _parser as _P
except ImportError:  # pragma: no cover - other Python versions
    _C = _P = None


@lru_cache(maxsize=32768)
def compile(pattern: str, flags: int = 0) -> re.Pattern:  # noqa: A001 - mirrors re.compile
    return re.compile(pattern, flags)


def search(pattern: str, string: str, flags: int = 0):
    pat, words, icase = _entry(pattern, flags)
    return pat.search(string) if words is None or _has_word(words, icase, string) else None


def match(pattern: str, string: str, flags: int = 0):
    pat, words, icase = _entry(pattern, flags)
    return pat.match(string) if words is None or _has_word(words, icase, string) else None


def fullmatch(pattern: str, string: str, flags: int = 0):
    pat, words, icase = _entry(pattern, flags)
    return pat.fullmatch(string) if words is None or _has_word(words, icase, string) else None


def findall(pattern: str, string: str, flags: int = 0):
    pat, words, icase = _entry(pattern, flags)
    return pat.findall(string) if words is None or _has_word(words, icase, string) else []


def finditer(pattern: str, string: str, flags: int = 0):
    pat, words, icase = _entry(pattern, flags)
    return pat.finditer(string) if words is None or _has_word(words, icase, string) else iter(())


def sub(pattern: str, repl, string: str, count: int = 0, flags: int = 0) -> str:
    return compile(pattern, flags).sub(repl, string, count)


# ---------------------------------------------------------------------------- literal prefilter

@lru_cache(maxsize=32768)
def _entry(pattern: str, flags: int = 0) -> tuple[re.Pattern, tuple[str, ...] | None, bool]:
    """(compiled pattern, required words or None, compare lowercased?) in one cache lookup."""
    req = required_literals(pattern, flags)
    return compile(pattern, flags), (req[0] if req else None), (req[1] if req else False)


def _has_word(words: tuple[str, ...], ignore_case: bool, string: str) -> bool:
    if ignore_case:
        if not string.isascii():  # non-ASCII case folds (the Kelvin sign is a 'k'): let re decide
            return True
        string = string.lower()
    for w in words:
        if w in string:
            return True
    return False


def may_match(pattern: str, string: str, flags: int = 0) -> bool:
    """False only when ``pattern`` cannot match anywhere in ``string``: none of the literals that
    every match contains occurs in it. True means 'run the regex'."""
    _, words, icase = _entry(pattern, flags)
    return words is None or _has_word(words, icase, string)


@lru_cache(maxsize=32768)
def required_literals(pattern: str, flags: int = 0) -> tuple[tuple[str, ...], bool] | None:
    """Words of which every match of ``pattern`` contains at least one, and whether they are to be
    compared case-insensitively (lowercased); None when no such words can be derived."""
    if _P is None:
        return None
    try:
        parsed = _P.parse(pattern, flags)
    except Exception:  # noqa: BLE001 - re.compile reports bad patterns, not this helper
        return None
    state = _Walk(bool(parsed.state.flags & _C.SRE_FLAG_IGNORECASE))
    best = state.best(state.sequence(list(parsed)))
    if best is None:
        return None
    words = tuple(sorted(w.lower() for w in best)) if state.ignore_case else tuple(sorted(best))
    if state.ignore_case and not all(w.isascii() for w in words):
        return None
    return words, state.ignore_case


class _Walk:
    """Necessary literals of a parsed pattern. A *candidate* is a set of strings of which every
    match contains one; a sequence yields one candidate per literal run and per element that has
    one, and any single candidate is enough (the most selective is kept)."""

    def __init__(self, ignore_case: bool):
        self.ignore_case = ignore_case

    def sequence(self, items) -> list[frozenset[str]]:
        out: list[frozenset[str]] = []
        run: list[str] = []
        for op, av in items:
            if op is _C.LITERAL:
                run.append(chr(av))
                continue
            if run:
                out.append(frozenset(["".join(run)]))
                run = []
            cand = self.element(op, av)
            if cand is not None:
                out.append(cand)
        if run:
            out.append(frozenset(["".join(run)]))
        return out

    def element(self, op, av) -> frozenset[str] | None:
        if op is _C.SUBPATTERN:
            add_flags = av[1]
            if add_flags & _C.SRE_FLAG_IGNORECASE:
                self.ignore_case = True
            return self.best(self.sequence(list(av[3])))
        if op is getattr(_C, "ATOMIC_GROUP", None):
            return self.best(self.sequence(list(av)))
        if op in (_C.MAX_REPEAT, _C.MIN_REPEAT) or op is getattr(_C, "POSSESSIVE_REPEAT", None):
            lo, _hi, item = av
            return self.best(self.sequence(list(item))) if lo >= 1 else None
        if op is _C.BRANCH:
            words: set[str] = set()
            for branch in av[1]:
                cand = self.best(self.sequence(list(branch)))
                if cand is None:
                    return None
                words |= cand
            return frozenset(words)
        if op is _C.IN:
            if all(o is _C.LITERAL for o, _ in av):
                return frozenset(chr(c) for _, c in av)
            return None
        return None  # AT, ANY, NOT_LITERAL, assertions, group references: no literal required

    @staticmethod
    def best(cands: list[frozenset[str]]) -> frozenset[str] | None:
        cands = [c for c in cands if c and all(c)]
        if not cands:
            return None
        return max(cands, key=lambda c: (min(map(len, c)), -len(c)))


escape = re.escape
S, I, M = re.S, re.I, re.M

"""Regular expressions with a large compile cache.

Detectors build small patterns around the names they find (``\\bacc\\s*\\+=``); with ``re``'s own
512-entry cache those evict each other and recompiling dominates the run time. Same signatures as
the ``re`` functions they wrap.
"""

from __future__ import annotations

import re
from functools import lru_cache


@lru_cache(maxsize=32768)
def compile(pattern: str, flags: int = 0) -> re.Pattern:  # noqa: A001 - mirrors re.compile
    return re.compile(pattern, flags)


def search(pattern: str, string: str, flags: int = 0):
    return compile(pattern, flags).search(string)


def match(pattern: str, string: str, flags: int = 0):
    return compile(pattern, flags).match(string)


def fullmatch(pattern: str, string: str, flags: int = 0):
    return compile(pattern, flags).fullmatch(string)


def findall(pattern: str, string: str, flags: int = 0):
    return compile(pattern, flags).findall(string)


def finditer(pattern: str, string: str, flags: int = 0):
    return compile(pattern, flags).finditer(string)


def sub(pattern: str, repl, string: str, count: int = 0, flags: int = 0) -> str:
    return compile(pattern, flags).sub(repl, string, count)


escape = re.escape
S, I, M = re.S, re.I, re.M

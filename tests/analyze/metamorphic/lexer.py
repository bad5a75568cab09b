"""A small C++ lexer, independent of tree-sitter, for checking what the transformers produced.

The transformers work on tree-sitter trees; checking their output with the same trees could
hide a mistake both share. This regex lexer only knows tokens: comments, string and character
literals (raw strings included), preprocessor lines, words, numbers and punctuators.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TOKEN = re.compile(
    r"""
    (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<string>(?:u8|[uUL])?R"(?P<delim>[^(\s"\\]*)\(.*?\)(?P=delim)"|(?:u8|[uUL])?"(?:\\.|[^"\\\n])*")
  | (?P<char>(?:u8|[uUL])?'(?:\\.|[^'\\\n])+')
  | (?P<pp>^[ \t]*\#(?:[^\n\\]|\\.|\\\n)*)
  | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<number>\.?[0-9](?:[eEpP][+-]|[A-Za-z0-9_.'])*)
  | (?P<punct><<<|>>>|<<=|>>=|->\*|\.\.\.|::|->|\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^!~<>=?:;,.(){}\[\]#@\\])
  | (?P<space>\s+)
  """,
    re.S | re.M | re.X,
)


@dataclass(frozen=True)
class Token:
    kind: str  # comment, string, char, pp, word, number, punct
    text: str
    line: int  # 0-based


def tokens(text: str) -> list[Token]:
    out, pos, line = [], 0, 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ValueError(f"cannot lex C++ at line {line + 1}: {text[pos:pos + 40]!r}")
        kind = m.lastgroup if m.lastgroup != "delim" else "string"
        if kind != "space":
            out.append(Token(kind, m.group(0), line))
        line += m.group(0).count("\n")
        pos = m.end()
    return out


def code_tokens(text: str) -> list[str]:
    """The token texts without comments; a preprocessor line becomes one entry, its tokens
    joined by single spaces (:func:`directive_tokens`)."""
    out = []
    for t in tokens(text):
        if t.kind == "comment":
            continue
        out.append(directive_tokens(t.text) if t.kind == "pp" else t.text)
    return out


_DEFINE = re.compile(r"\s*#\s*define\s+([A-Za-z_][A-Za-z0-9_]*)(\()?")


def directive_tokens(pp: str) -> str:
    """A directive as the preprocessor sees it: comments and line continuations removed, the
    tokens of a ``#define`` separated by single spaces, whatever the spacing was (spacing in a
    macro body means nothing, except between the macro's name and ``(``: function-like or not,
    kept as ``NAME(`` against ``NAME (``). Other directives keep their text with whitespace runs
    collapsed (``<cuda.h>`` is one header name)."""
    body = _strip_comments(pp).replace("\\\n", " ")
    m = _DEFINE.match(body)
    if not m:  # #include <a.h>, #pragma, #if ...: only the whitespace is normalised
        return " ".join(body.split())
    head = f"#define {m.group(1)}" + ("(" if m.group(2) else "")
    rest = " ".join(t.text for t in tokens(body[m.end():]) if t.kind != "comment")
    return f"{head} {rest}" if rest else head


def _strip_comments(pp: str) -> str:
    return re.sub(r"//[^\n]*|/\*.*?\*/", " ", pp, flags=re.S)


def words(text: str) -> list[tuple[str, str]]:
    """(word, what precedes it: '.', '->', '::' or '') for identifiers in code (also inside
    preprocessor lines other than ``#include``), not in comments or literals."""
    out: list[tuple[str, str]] = []
    prev = ""
    for t in tokens(text):
        if t.kind == "word":
            out.append((t.text, prev if prev in (".", "->", "::") else ""))
        elif t.kind == "pp" and not re.match(r"\s*#\s*include", t.text):
            for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", _strip_comments(t.text).lstrip()[1:]):
                out.append((w, ""))
        prev = t.text if t.kind == "punct" else ""
    return out


def line_starts(text: str) -> list[str]:
    """The first code token of every line: a cheap picture of the layout."""
    seen, out = set(), []
    for t in tokens(text):
        if t.kind != "comment" and t.line not in seen:
            seen.add(t.line)
            out.append(t.text)
    return out

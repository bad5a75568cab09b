"""Macro expansion for CUDA sources, before parsing, keeping every line where it was.

Real kernels hide what they do behind macros: ``CUTLASS_PRAGMA_UNROLL`` is ``#pragma unroll``,
``FETCH_FLOAT4(p)`` is a 128-bit load, ``#define BM 128`` is a tile size, ``WARP_REDUCE(v)`` is a
shuffle loop. Expanding the macros a file sees (its own, its includes', the submission's headers:
see :mod:`.translation_units`) lets the parser and the fact layer see the code the compiler sees,
whatever the macros are called.

Expansion is textual and line-preserving: an invocation that spans several lines is replaced by
its expansion followed by the same number of newlines, so line numbers of everything after it
stay right. Directive lines, comments and string literals are left alone, except that a
``#define`` or ``#undef`` inside a function body becomes blank lines once its invocations are
expanded: left there, it splits ``if (...) {...} #define ... else if (...)`` so that the parser no
longer sees the ``else`` (OneFlow's dispatch ladders define their ``else if`` arms that way). A
macro defined twice (``#if`` / ``#else`` alternatives: the build's flags are unknown) takes its
first definition.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(\([^)]*\))?(.*)$")
_DEFINE_OR_UNDEF = re.compile(r"^[ \t]*#[ \t]*(?:define|undef)\b")
_NOT_BRACES = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'')
_TOKEN = re.compile(
    r'(?P<comment>//[^\n]*|/\*.*?\*/)|(?P<string>"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\')|(?P<ident>[A-Za-z_]\w*)',
    re.S,
)
MAX_DEPTH = 12
MAX_GROWTH = 4  # stop expanding a text that has grown beyond this factor


@dataclass(frozen=True)
class Macro:
    name: str
    params: tuple[str, ...] | None  # None: object-like
    body: str
    variadic: bool = False


def _logical_lines(text: str) -> list[str]:
    """Directive lines joined across backslash continuations."""
    out, buf = [], ""
    for line in text.split("\n"):
        if line.endswith("\\"):
            buf += line[:-1] + " "
            continue
        out.append(buf + line)
        buf = ""
    if buf:
        out.append(buf)
    return out


# Function qualifiers that CUTLASS / CuTe headers define and submissions use without vendoring
# the headers: left unexpanded, ``CUTE_DEVICE void operator()(...)`` inside a struct is a syntax
# error and the struct's methods are lost. A submission's own ``#define`` of the same name wins.
LIBRARY_QUALIFIERS = {
    name: Macro(name, None, body) for name, body in {
        "CUTE_DEVICE": "__device__ __forceinline__", "CUTE_HOST_DEVICE": "__host__ __device__ __forceinline__",
        "CUTE_HOST": "__host__ __forceinline__", "CUTLASS_DEVICE": "__device__ __forceinline__",
        "CUTLASS_HOST_DEVICE": "__host__ __device__ __forceinline__", "CUTLASS_GLOBAL": "__global__",
    }.items()
}


def defines(text: str) -> dict[str, Macro]:
    """Every ``#define`` of one text, object- and function-like; a name defined twice (``#if`` /
    ``#else`` alternatives: the build's flags are unknown) keeps its first definition."""
    found: dict[str, Macro] = {}
    if "define" not in text:
        return found
    for line in _logical_lines(text):
        m = _DEFINE.match(line)
        if not m:
            continue
        name, params, body = m.group(1), m.group(2), m.group(3)
        body = re.sub(r"/\*.*?\*/", " ", body)
        body = re.sub(r"//.*$", "", body).strip()
        plist = None
        variadic = False
        if params is not None:
            names = [p.strip() for p in params[1:-1].split(",") if p.strip()]
            if names and names[-1].endswith("..."):
                variadic = True  # `...` binds __VA_ARGS__; GNU's named `ARGS...` binds ARGS
                names[-1] = names[-1][:-3].strip() or "__VA_ARGS__"
            plist = tuple(names)
        found.setdefault(name, Macro(name, plist, body, variadic))
    return found


_CONDITIONAL = re.compile(r"^[ \t]*#[ \t]*(if|ifdef|ifndef|endif)\b[ \t]*(\w*)")


def unconditional_defines(text: str) -> dict[str, str]:
    """The macros a text defines outside any ``#if`` -> their value text ("" for none, and for a
    function-like macro): those are defined, to that value, in every build. A header guard
    (``#ifndef X`` then ``#define X``) does not count as a condition, and ``X`` itself is not
    reported."""
    out: dict[str, str] = {}
    depth = 0
    guard: str | None = None
    for line in _logical_lines(text):
        m = _CONDITIONAL.match(line)
        if m:
            kind, name = m.group(1), m.group(2)
            if kind == "endif":
                depth = max(0, depth - 1)
            else:
                depth += 1
                guard = name if kind == "ifndef" and depth == 1 else None
            continue
        d = _DEFINE.match(line)
        if d and depth == 1 and guard == d.group(1):
            # a header guard: the body is unconditional, and the guard name itself is left out
            # (its own ``#ifndef`` must not read as ruled out)
            depth, guard = 0, None
        elif d and depth == 0:
            out[d.group(1)] = "" if d.group(2) else d.group(3).strip()
        elif line.strip():
            guard = None
    return out


# CUDA's own qualifiers. A ``#define __global__`` can only be a shim for a tool that is not nvcc
# (an IDE's indexer, a host-only lint build: ``#ifdef __JETBRAINS_IDE__ #define __global__``);
# under nvcc they are the language, so such a define is never expanded.
CUDA_QUALIFIERS = frozenset({
    "__global__", "__device__", "__host__", "__shared__", "__constant__", "__managed__", "__forceinline__",
    "__noinline__", "__restrict__", "__launch_bounds__", "__grid_constant__",
})


def collect(texts: list[str], defined: list[dict[str, Macro]] | None = None) -> dict[str, Macro]:
    """Every unambiguous ``#define`` in ``texts`` (the earlier text wins a name), over the
    library qualifiers a submission uses without defining (:data:`LIBRARY_QUALIFIERS`), never
    one of CUDA's own qualifiers (:data:`CUDA_QUALIFIERS`); ``defined`` is each text's
    :func:`defines`, where the caller has them already."""
    found: dict[str, Macro] = {}
    for table in defined if defined is not None else map(defines, texts):
        for name, macro in table.items():
            if name not in CUDA_QUALIFIERS:
                found.setdefault(name, macro)
    used = [q for q in LIBRARY_QUALIFIERS if q not in found and any(q in t for t in texts)]
    return found | {q: LIBRARY_QUALIFIERS[q] for q in used}


def _split_args(s: str, start: int) -> tuple[list[str], int] | None:
    """Arguments of an invocation whose '(' is at ``start``; returns (args, index after ')')."""
    depth, i, args, cur = 0, start, [], []
    n = len(s)
    while i < n:
        ch = s[i]
        if ch in "([{":
            depth += 1
            if depth > 1:
                cur.append(ch)
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                args.append("".join(cur))
                return [a.strip() for a in args], i + 1
            cur.append(ch)
        elif ch == "," and depth == 1:
            args.append("".join(cur))
            cur = []
        elif ch == "/" and s.startswith("//", i):  # a comment inside the arguments: dropped
            j = s.find("\n", i)
            i = len(s) if j < 0 else j
            cur.append(" ")
            continue
        elif ch == "/" and s.startswith("/*", i):
            j = s.find("*/", i + 2)
            i = len(s) if j < 0 else j + 2
            cur.append(" ")
            continue
        elif ch in "\"'":
            m = re.compile(r'"(?:[^"\\\n]|\\.)*"' if ch == '"' else r"'(?:[^'\\\n]|\\.)*'").match(s, i)
            if m:
                cur.append(m.group(0))
                i = m.end()
                continue
            cur.append(ch)
        else:
            cur.append(ch)
        i += 1
    return None


def _substitute(macro: Macro, args: list[str]) -> str:
    if macro.params is None:
        return macro.body
    if args == [""] and not macro.params:
        args = []
    binding: dict[str, str] = {}
    for i, p in enumerate(macro.params):
        if p == "__VA_ARGS__" or (macro.variadic and i == len(macro.params) - 1):
            binding[p] = ", ".join(args[i:])
        else:
            binding[p] = args[i] if i < len(args) else ""
    body = macro.body
    if "#" in body:
        body = _STRINGIZE.sub(lambda m: '"' + binding[m.group(1)].replace('"', '\\"') + '"' if m.group(1) in binding else m.group(0), body)
    body = _bind_words(_word_split(body), binding)
    return _PASTE.sub("", body) if "##" in body else body


@lru_cache(maxsize=4096)
def _word_split(body: str) -> tuple[str, ...]:
    """``body`` cut at its words: text, word, text, word, ..., text (what ``_WORD.sub`` would
    visit). A macro is invoked again and again with the same body: cut once, bound each time."""
    return tuple(_WORD.split(body))


def _bind_words(parts: tuple[str, ...], binding: dict[str, str]) -> str:
    """The text of ``parts`` with every word that names a parameter replaced by its argument."""
    return "".join(binding.get(p, p) if i % 2 else p for i, p in enumerate(parts))


_STRINGIZE = re.compile(r"(?<!#)#(?!#)\s*([A-Za-z_]\w*)")  # `#x`, not the `##` of a paste
_WORD = re.compile(r"\b([A-Za-z_]\w*)\b")
_PASTE = re.compile(r"\s*##\s*")
_IDENT = re.compile(r"[A-Za-z_]\w*")


def expand(text: str, macros: dict[str, Macro]) -> str:
    """``text`` with every invocation of ``macros`` expanded; lines keep their numbers."""
    if not macros:
        return text
    out_lines: list[str] = []
    lines = text.split("\n")
    i = 0
    in_directive = blanking = False
    depth = 0  # braces open at this point of the code (comments and literals aside)
    code_buf: list[str] = []
    limit = max(len(text) * MAX_GROWTH, 4096)

    def flush() -> None:
        if code_buf:
            chunk = "\n".join(code_buf)
            out_lines.append(_expand_chunk(chunk, macros, 0, set(), limit))
            code_buf.clear()

    while i < len(lines):
        line = lines[i]
        if in_directive or line.lstrip().startswith("#"):
            flush()
            if not in_directive:
                blanking = depth > 0 and bool(_DEFINE_OR_UNDEF.match(line))
            out_lines.append("" if blanking else line)
            in_directive = line.endswith("\\")
        else:
            code_buf.append(line)
            if "{" in line or "}" in line:
                bare = _NOT_BRACES.sub("", line)
                depth = max(0, depth + bare.count("{") - bare.count("}"))
        i += 1
    flush()
    return "\n".join(out_lines)


def _expand_chunk(s: str, macros: dict[str, Macro], depth: int, active: set[str], limit: int) -> str:
    if depth > MAX_DEPTH or not _mentions_macro(s, macros):
        return s
    out: list[str] = []
    pos = written = 0  # written: the length of ``out`` so far
    for m in _TOKEN.finditer(s):
        name = m.group("ident")
        if name is None or name not in macros or name in active:
            continue
        macro = macros[name]
        start, end = m.start(), m.end()
        if start < pos:
            continue
        if macro.params is not None:
            j = end
            while j < len(s) and s[j] in " \t\n":
                j += 1
            if j >= len(s) or s[j] != "(":
                continue
            parsed = _split_args(s, j)
            if parsed is None:
                continue
            args, end = parsed
            args = [_expand_chunk(a, macros, depth + 1, active, limit) for a in args]
            body = _substitute(macro, args)
        else:
            body = macro.body
        replacement = _expand_chunk(body, macros, depth + 1, active | {name}, limit).replace("\n", " ")
        newlines = s.count("\n", start, end)
        out.append(s[pos:start])
        out.append(replacement + "\n" * newlines)
        written += (start - pos) + len(out[-1])
        pos = end
        if written > limit:
            break
    out.append(s[pos:])
    return "".join(out)


def _mentions_macro(s: str, macros: dict[str, Macro]) -> bool:
    """Whether some identifier of ``s`` names a macro (the identifiers are listed in C: most
    chunks mention none, and testing them one match object at a time was most of the cost).
    With few macros, substring tests come first: a chunk that contains no macro name as text at
    all (most chunks) needs no list of its identifiers."""
    if len(macros) <= _FEW_MACROS and not any(name in s for name in macros):
        return False
    return not macros.keys().isdisjoint(_IDENT.findall(s))


_FEW_MACROS = 24  # up to this many names, one C substring scan each beats listing the identifiers

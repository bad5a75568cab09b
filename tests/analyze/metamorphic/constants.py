"""(d) Constants written another way: ``#define`` <-> ``constexpr``, and a constant turned into a
compile-time parameter given at the launch (CUDA template parameter, Triton ``tl.constexpr``).

Why: tile sizes, stage counts and thread counts decide most properties (a shared array of
``kBM x (kBK + kPad)`` is a padded tile only once ``kPad`` is known), and real code gives them in
every one of these forms. An analyzer that resolves one form only misreads the others.

``define_constexpr``
    CUDA: every file-scope ``#define NAME value`` becomes ``constexpr auto NAME = value;``; a file
    without such defines gets the reverse (every file-scope ``constexpr`` constant becomes a
    ``#define``, with a cast where its type is not ``int``). Triton: a ``tl.constexpr`` kernel
    parameter that every launch sets from a module constant is dropped, and the kernel reads the
    module constant, now a ``tl.constexpr`` global, directly.
``template_param``
    CUDA: in each launched kernel, a file constant it uses (a shared-array dimension first) is
    replaced by a new template parameter, and every launch passes the value as a template argument.
    Triton: a module ``tl.constexpr`` global that kernels read becomes a ``tl.constexpr`` parameter
    of each of them, passed at every launch, and the global is removed.
"""

from __future__ import annotations

from .cuda_constants import constant_to_template_param, constexpr_to_define, define_to_constexpr
from .triton_constants import triton_global_to_param, triton_param_to_global
from .workspace import NotApplicable, Submission


def define_constexpr(sub: Submission) -> Submission:
    files, notes = dict(sub.files), []
    converted: dict[str, tuple[str, list[str]]] = {}  # C++ path -> (direction, names)
    params: list[tuple[str, str, str]] = []  # Triton (kernel, parameter, global)
    last = "no file-scope constants"
    for path in sub.cpp_files():
        new, names = define_to_constexpr(sub.files[path])
        kind = "define->constexpr"
        if not names:
            new, names = constexpr_to_define(sub.files[path])
            kind = "constexpr->define"
        if names:
            files[path] = new
            converted[path] = (kind, names)
            notes.append(f"{path}: {kind} {', '.join(names)}")
    if not sub.is_cuda:
        for path in sub.python_files():
            try:
                files[path], done = triton_param_to_global(sub.files[path])
            except NotApplicable as exc:
                last = str(exc)
                continue
            params += done
            notes += [f"{path}: {k}: parameter {p} -> module tl.constexpr {g}" for k, p, g in done]
    if not notes:
        raise NotApplicable(last)
    return sub.with_files(files, "; ".join(notes), cpp_constants=converted, triton_params=params)


def template_param(sub: Submission) -> Submission:
    files, notes = dict(sub.files), []
    cpp_done: list[tuple[str, str, str, str, int]] = []  # (path, kernel, constant, parameter, value)
    triton_done: list[tuple[str, str]] = []  # (kernel, global)
    last = "no launched kernel uses a file constant with a known value"
    for path in sub.cpp_files():
        new, done = constant_to_template_param(sub.files[path])
        if done:
            files[path] = new
            cpp_done += [(path, *d) for d in done]
            notes += [f"{path}: {k}: {c} -> template <int {p}> = {v} at the launch" for k, c, p, v in done]
    if not sub.is_cuda:
        for path in sub.python_files():
            try:
                files[path], done = triton_global_to_param(sub.files[path])
            except NotApplicable as exc:
                last = str(exc)
                continue
            triton_done += done
            notes += [f"{path}: {k}: module {g} -> tl.constexpr parameter given at the launch" for k, g in done]
    if not notes:
        raise NotApplicable(last)
    return sub.with_files(files, "; ".join(notes), cpp_template=cpp_done, triton_globals=triton_done)

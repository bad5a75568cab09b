"""Typed records from TOML data: the dataclasses *are* the schema.

Every data file of the benchmark (task specs, the property catalogue, corpus labels) is parsed into
frozen dataclasses by :func:`build`. The dataclass fields declare the schema: field name = allowed key,
type annotation = allowed value, a default = optional key. Deviations are collected as
:class:`Problem` records carrying the file and the dotted key, so that a user sees *every* problem in
one pass, e.g. ``tasks/softmax/task.toml: workload[2].params: missing key 'N'``.

Why not jsonschema or pydantic: ``d2k_profile`` has to run on GPU machines that have only torch,
triton and numpy, and it loads task specs there. Dataclass introspection covers the few types we
use (str, int, float, bool, Literal, list, dict, nested records) in a page of code.
"""

from __future__ import annotations

import dataclasses
import tomllib
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar, Union, get_args, get_origin, get_type_hints

T = TypeVar("T")


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a data file: where (file, dotted key) and what."""

    file: str
    key: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}: {self.key}" if self.key else self.file
        return f"{where}: {self.message}"


class SpecError(Exception):
    """Raised when a data file cannot be turned into records; carries every problem found."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


def read_toml(path: Path, problems: list[Problem]) -> dict[str, Any] | None:
    """Parse a TOML file, turning I/O and syntax errors into problems (tomllib reports the line)."""
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        problems.append(Problem(str(path), "", "file not found"))
    except tomllib.TOMLDecodeError as exc:
        problems.append(Problem(str(path), "", f"TOML syntax error: {exc}"))
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(Problem(str(path), "", f"cannot read: {exc}"))
    return None


def _type_name(tp: Any) -> str:
    origin = get_origin(tp)
    if origin is Literal:
        return " | ".join(repr(a) for a in get_args(tp))
    if origin in (Union, types.UnionType):
        return " | ".join(_type_name(a) for a in get_args(tp))
    if origin is not None:
        return f"{origin.__name__}[{', '.join(_type_name(a) for a in get_args(tp))}]"
    return getattr(tp, "__name__", str(tp))


def _join(key: str, sub: str) -> str:
    if not key:
        return sub
    return f"{key}{sub}" if sub.startswith("[") else f"{key}.{sub}"


def convert(tp: Any, value: Any, file: str, key: str, problems: list[Problem]) -> Any:
    """Check ``value`` against type ``tp``; return the converted value or None (with a problem)."""
    origin = get_origin(tp)
    if tp is Any:
        return value
    if dataclasses.is_dataclass(tp):
        return build(tp, value, file, key, problems)
    if origin is Literal:
        if value in get_args(tp):
            return value
        problems.append(Problem(file, key, f"expected one of {_type_name(tp)}, got {value!r}"))
        return None
    if origin in (Union, types.UnionType):
        for arg in get_args(tp):
            trial: list[Problem] = []
            out = convert(arg, value, file, key, trial)
            if not trial:
                return out
        problems.append(Problem(file, key, f"expected {_type_name(tp)}, got {type(value).__name__} {value!r}"))
        return None
    if origin in (list, tuple):
        if not isinstance(value, list):
            problems.append(Problem(file, key, f"expected a list, got {type(value).__name__}"))
            return None
        (item_tp, *_) = get_args(tp) or (Any,)
        items = [convert(item_tp, v, file, _join(key, f"[{i}]"), problems) for i, v in enumerate(value)]
        return tuple(items) if origin is tuple else items
    if origin is dict:
        if not isinstance(value, dict):
            problems.append(Problem(file, key, f"expected a table, got {type(value).__name__}"))
            return None
        _, val_tp = get_args(tp)
        return {k: convert(val_tp, v, file, _join(key, k), problems) for k, v in value.items()}
    if tp is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    elif tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif isinstance(value, tp):
        return value
    problems.append(Problem(file, key, f"expected {_type_name(tp)}, got {type(value).__name__} {value!r}"))
    return None


def build(cls: type[T], data: Any, file: str, key: str, problems: list[Problem]) -> T | None:
    """Build dataclass ``cls`` from a TOML table, recording unknown keys, missing keys and bad types.

    Fields declared with :func:`derived` are filled by the loader (e.g. a task's folder), not read
    from the file.
    """
    if not isinstance(data, dict):
        problems.append(Problem(file, key, f"expected a table, got {type(data).__name__}"))
        return None
    hints = get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if not f.metadata.get("derived")}
    before = len(problems)
    for extra in sorted(set(data) - set(fields)):
        close = [name for name in fields if name.rstrip("s") == extra.rstrip("s")]
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        problems.append(Problem(file, _join(key, extra), f"unknown key{hint}"))
    kwargs: dict[str, Any] = {}
    for name, field in fields.items():
        if name in data:
            kwargs[name] = convert(hints[name], data[name], file, _join(key, name), problems)
        elif field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
            problems.append(Problem(file, _join(key, name), "missing key"))
    if len(problems) > before:
        return None
    return cls(**kwargs)


def derived(default: Any = None) -> Any:
    """A record field that is set by the loader, not read from the data file."""
    return dataclasses.field(default=default, metadata={"derived": True}, compare=False)


__all__ = ["Problem", "SpecError", "build", "convert", "derived", "read_toml"]

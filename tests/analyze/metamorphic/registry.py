"""The transformations by name, in the order the tests run them."""

from __future__ import annotations

from typing import Callable

from .constants import define_constexpr, template_param
from .move_helper import move_helper
from .reformat import reformat
from .rename import rename
from .workspace import Submission

TRANSFORMS: dict[str, Callable[[Submission], Submission]] = {
    "rename": rename,  # (a)
    "reformat": reformat,  # (b)
    "move_helper": move_helper,  # (c)
    "define_constexpr": define_constexpr,  # (d) #define <-> constexpr; Triton parameter -> global
    "template_param": template_param,  # (d) constant -> CUDA template / Triton constexpr parameter
}

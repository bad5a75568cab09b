"""Versioned prompt templates (``rubrics/judge/<name>_v<N>.toml``) and the judge's price table.

Templates are data so that prompt wording can be reviewed and versioned without touching code.
The version (``grade_v1``) is written into every record and the cache key, so a change of
wording never mixes old and new verdicts.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

GRADE, DISCOVER = "grade", "discover"


def judge_dir() -> Path:
    """``rubrics/judge`` of the bundled suite (the checkout, or the copy inside the wheel)."""
    from d2k_spec.locations import judge_dir as bundled

    return bundled()


@dataclass(frozen=True)
class PromptTemplate:
    name: str
    version: int
    system: str
    user: str
    tool_name: str
    tool_description: str

    @property
    def label(self) -> str:
        """What goes into records and cache keys: ``grade_v1``."""
        return f"{self.name}_v{self.version}"


class TemplateError(Exception):
    """A template file is missing or malformed (a usage error for the CLI, not a crash)."""


def load_template(name: str, version: int | None = None, folder: Path | None = None) -> PromptTemplate:
    """The template ``name`` at ``version`` (default: the highest version present)."""
    folder = folder or judge_dir()
    found = sorted(
        (int(p.stem.rsplit("_v", 1)[1]), p) for p in folder.glob(f"{name}_v*.toml") if p.stem.rsplit("_v", 1)[1].isdigit()
    )
    if version is not None:
        found = [(v, p) for v, p in found if v == version]
    if not found:
        raise TemplateError(f"no prompt template {name}_v{version or '*'}.toml in {folder}")
    number, path = found[-1]
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        template = PromptTemplate(
            name=data["name"], version=int(data["version"]), system=data["system"].strip(), user=data["user"].strip(),
            tool_name=data["tool_name"], tool_description=data["tool_description"],
        )
    except (OSError, tomllib.TOMLDecodeError, KeyError, TypeError, ValueError) as exc:
        raise TemplateError(f"{path}: not a valid prompt template ({type(exc).__name__}: {exc})") from None
    if template.version != number or template.name != name:
        raise TemplateError(f"{path}: name/version inside ({template.label}) do not match the file name")
    return template


@dataclass(frozen=True)
class PriceTable:
    """USD per million input/output tokens per model; batch requests cost ``batch_discount`` times that."""

    prices: dict[str, tuple[float, float]]
    batch_discount: float = 0.5

    def cost(self, model: str, input_tokens: int, output_tokens: int, batch: bool = False) -> float | None:
        """Dollar cost of one request; None when the model is not in the table (unknown, not free)."""
        if model not in self.prices:
            return None
        per_in, per_out = self.prices[model]
        usd = (input_tokens * per_in + output_tokens * per_out) / 1e6
        return usd * (self.batch_discount if batch else 1.0)


def load_prices(path: Path | None = None) -> PriceTable:
    path = path or judge_dir() / "prices.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        prices = {m: (float(p["input"]), float(p["output"])) for m, p in data.get("model", {}).items()}
        return PriceTable(prices, float(data.get("batch_discount", 0.5)))
    except (OSError, tomllib.TOMLDecodeError, KeyError, TypeError, ValueError) as exc:
        raise TemplateError(f"{path}: not a valid price table ({type(exc).__name__}: {exc})") from None

"""Token usage and its cost, from the price table ``rubrics/agent/prices.toml``.

Prices are USD per million tokens, per model id, with separate rates for cache writes and cache
reads. A model (or a rate) missing from the table makes the cost *unknown*: recorded as null,
never as 0, because a zero would make an expensive run look free.
"""

from __future__ import annotations

import tomllib
from dataclasses import asdict, dataclass
from pathlib import Path

from .errors import ConfigError
from .locations import AGENT_DIR

DEFAULT_PRICES = AGENT_DIR / "prices.toml"


@dataclass(frozen=True)
class Price:
    """USD per million tokens. ``None`` for a rate the table does not state."""

    input: float
    output: float
    cache_write: float | None = None
    cache_read: float | None = None


@dataclass
class Usage:
    """Tokens of one model response (or a sum of them). ``input_tokens`` excludes cached tokens:
    the Anthropic API reports it that way, and the OpenAI adapter subtracts the cached part."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0

    def __add__(self, other: "Usage") -> "Usage":
        return Usage(*(a + b for a, b in zip(astuple_usage(self), astuple_usage(other))))

    def to_dict(self) -> dict[str, int]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict | None) -> "Usage":
        data = data or {}
        return cls(**{k: int(data.get(k) or 0) for k in cls.__dataclass_fields__})


def astuple_usage(u: Usage) -> tuple[int, int, int, int]:
    return (u.input_tokens, u.output_tokens, u.cache_write_tokens, u.cache_read_tokens)


def load_prices(path: Path | None = None) -> dict[str, Price]:
    """The price table; a malformed file is a :class:`ConfigError` (one line, exit 2)."""
    path = Path(path or DEFAULT_PRICES)
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"price table {path}: {exc}") from exc
    out: dict[str, Price] = {}
    for model, rates in data.get("model", {}).items():
        try:
            out[model] = Price(**rates)
        except TypeError as exc:
            raise ConfigError(f"price table {path}: model {model!r}: {exc}") from exc
    return out


def cost_usd(usage: Usage, price: Price | None) -> float | None:
    """Dollar cost of ``usage``; None when the price, or a rate that is needed, is unknown (no
    tokens cost nothing whatever the price: a replayed run is free, not unknown)."""
    if not any(astuple_usage(usage)):
        return 0.0
    if price is None:
        return None
    parts = [(usage.input_tokens, price.input), (usage.output_tokens, price.output),
             (usage.cache_write_tokens, price.cache_write), (usage.cache_read_tokens, price.cache_read)]
    total = 0.0
    for tokens, rate in parts:
        if tokens and rate is None:
            return None
        total += tokens * (rate or 0.0) / 1e6
    return total


def add_costs(a: float | None, b: float | None) -> float | None:
    """Sum of two costs where unknown is contagious: unknown + anything = unknown."""
    return None if a is None or b is None else a + b

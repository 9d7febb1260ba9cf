"""Validation of game options: bad options fail at construction with a message saying what is allowed.

Numpy scalars (``np.int64(4)`` from a sweep, ``np.bool_(True)``, ``np.str_("random")``) are accepted as the
Python value they hold, and the resolved options hold that plain value, so they print, compare and
serialise to JSON like any other.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Option:
    """One named option: its default, a predicate, and the human description of the allowed values."""

    name: str
    default: Any
    allowed: str
    check: Callable[[Any], bool]
    doc: str = ""
    values: tuple[Any, ...] = ()  # the allowed values one by one (one_of; an integer's extra values), for forms
    bounds: tuple[int, int] | None = None  # an integer's minimum and maximum


def one_of(name: str, values: Iterable[Any], default: Any, doc: str = "") -> Option:
    values = tuple(values)
    # bool is an int in Python: keep True from passing as 1 (and 1 as True).
    def check(v: Any) -> bool:
        return any(v == x and type(v) is type(x) for x in values)

    return Option(name, default, "one of " + ", ".join(map(repr, values)), check, doc, values)


def integer(name: str, default: Any, minimum: int, maximum: int, doc: str = "", allow_none: bool = False,
            extra: Iterable[Any] = ()) -> Option:
    """An integer in ``minimum..maximum``: the maximum keeps every observation bound finite (in float32) and
    the game playable, so an absurd value fails here rather than as an infinite bound or an endless game."""
    extra = tuple(extra)

    def check(v: Any) -> bool:
        if v is None:
            return allow_none
        if any(v == x and type(v) is type(x) for x in extra):
            return True
        return type(v) is int and minimum <= v <= maximum

    allowed = f"an integer from {minimum} to {maximum}"
    if extra:
        allowed = " or ".join([*map(repr, extra), allowed])
    if allow_none:
        allowed += " or None"
    return Option(name, default, allowed, check, doc, extra + ((None,) if allow_none else ()), (minimum, maximum))


def boolean(name: str, default: bool, doc: str = "") -> Option:
    return Option(name, default, "True or False", lambda v: type(v) is bool, doc)


def resolve(game: str, schema: Iterable[Option], given: Mapping[str, Any]) -> dict[str, Any]:
    """Fill defaults and check every value; unknown names and bad values raise ``ValueError``."""
    schema = {o.name: o for o in schema}
    unknown = sorted(set(given) - set(schema))
    if unknown:
        raise ValueError(f"{game}: unknown option(s) {unknown}; known options: {sorted(schema)}")
    options = {}
    for name, option in schema.items():
        raw = given.get(name, option.default)
        # np.int64 -> int, np.bool_ -> bool: the exact type checks below then apply to the plain value
        value = raw.item() if isinstance(raw, np.generic) else raw
        if not option.check(value):
            raise ValueError(f"{game}: option {name}={raw!r} is not allowed; expected {option.allowed}")
        options[name] = value
    return options


def markdown_table(schema: Iterable[Option]) -> str:
    rows = ["| Option | Allowed | Default | Meaning |", "|---|---|---|---|"]
    rows += [f"| `{o.name}` | {o.allowed} | `{o.default!r}` | {o.doc} |" for o in schema]
    return "\n".join(rows)

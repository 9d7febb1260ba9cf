"""The ``name:key=value,…`` grammar of the agent specs with options (``search``, ``ismcts``), parsed into a frozen
dataclass of settings whose defaults give each option's type; every mistake is one ``ValueError`` line naming it."""

from __future__ import annotations

from dataclasses import fields
from typing import Any, TypeVar

Settings = TypeVar("Settings")


def parse_options(cls: type[Settings], prefix: str, spec: str) -> Settings:
    """``prefix`` or ``prefix:key=value,…`` → ``cls(**options)``; a clear ``ValueError`` for anything else."""
    name, _, rest = spec.partition(":")
    if name != prefix:
        raise ValueError(f"not a {prefix} spec: {spec!r}")
    kinds = {f.name: type(f.default) for f in fields(cls)}
    values: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in rest.split(","))):
        key, eq, text = item.partition("=")
        key = key.strip()
        if not eq:
            raise ValueError(f"{prefix} option {item!r} is not key=value (in {spec!r})")
        if key not in kinds:
            raise ValueError(f"unknown {prefix} option {key!r} in {spec!r}; allowed: {', '.join(kinds)}")
        if key in values:
            raise ValueError(f"{prefix} option {key!r} is given twice in {spec!r}")
        try:
            values[key] = kinds[key](text.strip())
        except ValueError:  # only int and float conversions can fail
            wanted = "an integer" if kinds[key] is int else "a number"
            raise ValueError(f"{prefix} option {key}={text.strip()!r} is not {wanted} (in {spec!r})") from None
    return cls(**values)

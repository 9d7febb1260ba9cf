"""What the commands share on their command lines, read one way by all of them (and light: no torch).

* :class:`ArgumentParser`: argparse, but a bad argument gets one line on stderr that names the flag, and exit
  code 2 (the usage block is what ``--help`` is for).
* ``type=`` functions for the flags several commands have: :func:`seed`, :func:`count`; :func:`integer` reads
  a number the way they do (the play prompt too).
* :func:`game_options`: the game options of ``--players`` and ``--set option=value``.

Config files and ``--set key=value`` of the training commands are read by :mod:`tabletop_rl.training.config`,
whose :func:`~tabletop_rl.training.config.apply_override` reads every ``--set``.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any, NoReturn

from .config import apply_override


class ArgumentParser(argparse.ArgumentParser):
    """Errors in one line, naming the flag: ``<prog>: error: argument --seed: expected …``; exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def integer(text: str) -> int | None:
    """The integer ``text`` spells (what ``int`` reads), or ``None``.

    Not '²' (a digit to ``isdigit``, not to ``int``), and not a 5,000-digit number (``int`` fails with Python's
    limit message)."""
    body = text.strip()
    digits = body[1:] if body[:1] in ("+", "-") else body
    if not (digits[:1].isdecimal() and len(digits) <= 100):
        return None
    try:
        return int(body)
    except ValueError:  # '5²', '1__0'
        return None


def _at_least(text: str, least: int, expected: str) -> int:
    value = integer(text)
    if value is None or value < least:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
    return value


def seed(text: str) -> int:
    """``--seed``: a non-negative integer."""
    return _at_least(text, 0, "a non-negative integer")


def count(text: str) -> int:
    """``--games``, ``--workers``, ``--players``, …: an integer >= 1."""
    return _at_least(text, 1, "an integer >= 1")


def game_options(settings: Sequence[str], players: int | None = None) -> dict[str, Any]:
    """The options of ``--players`` (``num_players``) and of each ``--set option=value`` (the value read as YAML);
    a malformed ``--set`` is a ``ValueError`` naming it. The game checks the options when it is made."""
    options: dict[str, Any] = {} if players is None else {"num_players": players}
    for item in settings:
        apply_override(options, item)
    return options

"""What the commands share on their command lines, read one way by all of them (and light: no torch): here the
flags and `--set`; stopping a command on a signal in :mod:`.stopping`; a game in the terminal and a recorded game
as text, for ``play`` and ``replay``, in :mod:`.terminal`.

* :class:`ArgumentParser`: argparse, but a bad argument gets one line on stderr that names the flag, and exit
  code 2 (the usage block is what ``--help`` is for).
* ``type=`` functions for the flags several commands have: :func:`seed`, :func:`count`; :func:`integer` reads
  a number the way they do (the play prompt too).
* :func:`run`: a command's ``main`` as the program, ending quietly when its reader stops reading (``| head``);
  :func:`error_line`: an error in the command's words (``no such file: …``, not ``[Errno 2] …``).
* :func:`apply_override` reads every ``--set key=value`` (of a game option or of a training config key);
  :func:`game_options`: the game options of ``--players`` and ``--set option=value``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NoReturn

import yaml

from ...envs.core.versions import VersionWarning

_show_warning = warnings.showwarning


def _show_in_one_line(message, category, filename, lineno, file=None, line=None):
    """A command says a file's other game version in one line, ``warning: …``, not with a source location."""
    if issubclass(category, VersionWarning):
        print(f"warning: {message}", file=file or sys.stderr)
    else:
        _show_warning(message, category, filename, lineno, file, line)


warnings.showwarning = _show_in_one_line  # every command imports this module; a library user keeps Python's display


class ArgumentParser(argparse.ArgumentParser):
    """Errors in one line, naming the flag: ``<prog>: error: argument --seed: expected …``; exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def run(main: Callable[[], Any]) -> NoReturn:
    """Exit with ``main()``'s code (an int; what else it returns, for the tests, means 0); if stdout's reader has
    gone (``evaluate ... | head``), exit 1 quietly instead of with a ``BrokenPipeError`` traceback."""
    try:
        result = main()
        code = result if isinstance(result, int) else 0
        sys.stdout.flush()  # a closed pipe shows here, inside the try, not in the interpreter's flush at exit
    except BrokenPipeError:
        # Python's recipe (docs of the signal module): stdout to devnull, so that the flush at exit cannot fail too
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 1
    sys.exit(code)


def error_line(error: Exception) -> str:
    """An error in a command's words: a file that cannot be read or written says which, ``no such file:
    configs/nope.yaml``, not ``[Errno 2] No such file or directory: 'configs/nope.yaml'``."""
    if not isinstance(error, OSError) or error.filename is None or not error.strerror:
        return str(error)
    if isinstance(error, FileNotFoundError):
        return f"no such file: {error.filename}"
    return f"{error.filename}: {error.strerror[0].lower()}{error.strerror[1:]}"


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


def set_flags(options: Mapping[str, Any]) -> list[str]:
    """The ``--set option=value`` arguments that give ``options`` back through :func:`game_options` (JSON is
    YAML)."""
    return [arg for k, v in options.items() for arg in ("--set", f"{k}={json.dumps(v)}")]


def yaml_problem(error: yaml.YAMLError) -> str:
    """What PyYAML found wrong, in one line (its own message quotes the text over several)."""
    if isinstance(error, yaml.MarkedYAMLError) and error.problem_mark is not None:
        mark = error.problem_mark
        context = f" {error.context}" if error.context else ""
        return f"{error.problem}{context} (line {mark.line + 1}, column {mark.column + 1})"
    return " ".join(str(error).split())


def apply_override(raw: dict[str, Any], item: str) -> None:
    """``a.b=value``: the value is parsed as YAML (``1e-4``, ``[64, 64]``, ``{random: 1}``, ``null``).

    Every command reads its ``--set`` here: a malformed one is a ``ValueError`` in one line naming it."""
    key, sep, text = item.partition("=")
    if not sep or not key.strip():
        raise ValueError(f"--set {item!r}: expected key=value (the value read as YAML)")
    try:
        value = yaml.safe_load(text) if text.strip() else ""
    except yaml.YAMLError as error:
        raise ValueError(f"--set {item!r}: the value is not valid YAML: {yaml_problem(error)}") from None
    *parents, leaf = key.strip().split(".")
    node = raw
    for part in parents:
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise ValueError(f"--set {item!r}: {part!r} is not a section")
        node = child
    node[leaf] = value

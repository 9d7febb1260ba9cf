"""Every rule id cited in the code and the tests exists in its game's rules spec (``docs/rules/<game>.md``).

A citation is an id of one of the spec's families (L…, F…, P…/D…/I…, T…/W…, …) in a comment, a docstring or an
identifier (``test_L12_…``); a sub-id such as L34a counts when L34 exists. A file belongs to the game whose name
its path holds; a file of no game (``envs/core``, ``training``, shared tests) may cite any game's ids.
"""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GAMES = ("five_towers", "lost_cities", "palazzo", "torres")
ID = re.compile(r"(?<![A-Za-z0-9.])([A-Z]\d+)([a-z]?)(?![A-Za-z0-9])")
# where a spec defines an id: at the start of a line, a list item or a table row, bold or not ("- **L12.** …",
# "| D1 | …", "**T1 Board.**", "**Assumption A1**")
DEFINITION = re.compile(r"^\s*(?:[-*|]\s*)?(?:\*\*)?(?:Assumption\s+)?([A-Z])\d+[a-z]?\b", re.M)


def spec_ids(game: str) -> tuple[set[str], set[str]]:
    """The ids the spec names (with and without their sub-id letter) and its id families (the letters it defines
    more than three ids of, so that a stray "P2" in a table does not make P a Five Towers family)."""
    text = (ROOT / "docs" / "rules" / f"{game}.md").read_text(encoding="utf-8")
    found = ID.findall(text)
    ids = {base for base, _ in found} | {base + sub for base, sub in found}
    letters = DEFINITION.findall(text)
    return ids, {letter for letter in set(letters) if letters.count(letter) > 3}


SPECS = {game: spec_ids(game) for game in GAMES}


def cited_text(path: Path) -> list[tuple[int, str]]:
    """(line, text) of the comments, docstrings and identifiers of a Python file: where rule ids are cited
    (other string literals are data: a card named "A3" is no citation)."""
    out, previous = [], tokenize.NEWLINE
    for token in tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline):
        if token.type == tokenize.COMMENT and "noqa" not in token.string:
            out.append((token.start[0], token.string))
        elif token.type == tokenize.NAME:
            out.append((token.start[0], token.string.replace("_", " ")))
        elif token.type == tokenize.STRING and previous in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
                                                             tokenize.NL):
            out.append((token.start[0], token.string))  # a string standing alone: a docstring
        if token.type not in (tokenize.COMMENT, tokenize.NL):
            previous = token.type
    return out


def sources() -> list[Path]:
    return sorted(p for folder in ("envs", "training", "tests") for p in (ROOT / folder).rglob("*.py"))


def test_the_rules_are_in_the_repository():
    for game in GAMES:
        ids, families = SPECS[game]
        assert len(ids) >= 40 and families, game


@pytest.mark.parametrize("path", sources(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_cited_rule_id_exists_in_its_spec(path: Path):
    games = [g for g in GAMES if g in str(path.relative_to(ROOT))] or list(GAMES)
    missing = []
    for line, text in cited_text(path):
        for base, sub in ID.findall(text):
            owners = [g for g in games if base[0] in SPECS[g][1]]
            if owners and not any(base in SPECS[g][0] for g in owners):
                missing.append(f"line {line}: {base + sub} (not in docs/rules/{'/'.join(owners)}.md)")
    assert not missing, "\n".join(missing)

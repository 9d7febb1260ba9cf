"""Versions a paper can cite (docs/versions.md): each game's version is pinned to a fingerprint of what an agent sees
and gets in it (tests/game_versions.py), every id written anywhere is today's, and ``tabletop_rl.__version__`` is
pyproject.toml's."""

from __future__ import annotations

import re
from pathlib import Path

import gymnasium
import pettingzoo
import pytest
from game_versions import COMMAND, fingerprint, pinned

import tabletop_rl
from tabletop_rl.envs.core import registry

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", tabletop_rl.list_games())
def test_behaviour_is_pinned_to_the_version(name):
    version, recorded = tabletop_rl.game_version(name), pinned().get(name, {})
    assert str(version) in recorded, f"{tabletop_rl.env_id(name)} has no fingerprint yet: record it with {COMMAND}"
    assert max(map(int, recorded)) == version, f"{name}'s version went down to {version}: versions only go up"
    assert fingerprint(name) == recorded[str(version)], (
        f"{name}'s behaviour changed: bump its version to {version + 1} (register({name!r}, …, version="
        f"{version + 1}) in envs/__init__.py), add a CHANGELOG entry, and record the new fingerprint with {COMMAND}")


def test_the_ids_are_the_versions():
    for name in tabletop_rl.list_games():
        version = tabletop_rl.game_version(name)
        assert tabletop_rl.env_id(name) == f"tabletop/{name}-v{version}"
        assert gymnasium.spec(tabletop_rl.env_id(name)).kwargs == {"game": name}
        env = pettingzoo.make("aec", tabletop_rl.env_id(name))
        assert env.unwrapped.metadata["name"] == f"{name}_v{version}"


def test_the_versions_doc_lists_todays_ids():
    table = re.findall(r"^\| [^|]+ \| `(tabletop/[^`]+)` \|", (ROOT / "docs" / "versions.md").read_text(), re.M)
    assert sorted(table) == [tabletop_rl.env_id(name) for name in tabletop_rl.list_games()]


def test_the_changelog_names_every_current_id():
    changelog = (ROOT / "CHANGELOG.md").read_text()
    missing = [env_id for env_id in map(tabletop_rl.env_id, tabletop_rl.list_games()) if env_id not in changelog]
    assert not missing, f"CHANGELOG.md does not name {missing}: say what changed in each new version"


# tabletop/lost_cities-v0 and lost_cities_v0 (PettingZoo's metadata name); tabletop/<game>-v0 (any game); and
# f"tabletop/{name}-v0" or f"{name}_v0", built by hand instead of by env_id (always wrong)
ID = re.compile(r"tabletop/(?P<name>[<>\w]+)-v(?P<version>\d+)|\b(?P<metadata>[a-z_]+)_v(?P<number>\d+)\b"
                r"|(?P<built>(?:tabletop/)?\{[^}]*\}[-_]v\d+)")


def test_every_id_written_anywhere_is_todays():
    """Code, tests, examples, configs and docs name each game's current version (not the CHANGELOG and
    docs/versions.md, which name other versions on purpose); ``<game>-v0`` for any game only while every game is at
    version 0; code builds an id with ``env_id``."""
    files = [ROOT / "README.md"] + [
        path for folder in ("tabletop_rl", "envs", "training", "tests", "benchmarks", "examples", "configs", "docs")
        for path in (ROOT / folder).rglob("*") if path.suffix in (".py", ".md", ".yaml")
        and path not in (Path(__file__).resolve(), ROOT / "docs" / "versions.md")]
    versions = {name: tabletop_rl.game_version(name) for name in tabletop_rl.list_games()}
    wrong, found = [], 0
    for path in files:
        for line_number, line in enumerate(path.read_text().splitlines(), 1):
            for match in ID.finditer(line):
                name = match["name"] or match["metadata"]
                version = int(match["version"] or match["number"] or -1)
                if match["built"]:
                    expected = None
                elif name.startswith("<"):
                    expected = set(versions.values())
                elif name in versions:
                    expected = {versions[name]}
                else:
                    continue  # another library's id: connect_four_v3
                found += 1
                if expected != {version}:
                    wrong.append(f"{path.relative_to(ROOT)}:{line_number}: {match.group(0)}")
    assert found > 30
    assert not wrong, f"ids of other versions than {versions}, or built by hand:\n" + "\n".join(wrong)


def test_the_package_version_is_pyprojects():
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    assert tabletop_rl.__version__ == tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def test_a_version_is_a_natural_number():
    for bad in (-1, True, 1.0, "1"):
        with pytest.raises(ValueError, match=r"register\('tiny'\): version must be an integer >= 0, got "):
            registry.register("tiny", "tests.test_evaluate", version=bad)
    assert "tiny" not in registry.list_games()

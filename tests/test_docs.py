"""The README quickstart runs, and every game's doc contains the tables generated from the code."""

import contextlib
import io
import re
import sys
from pathlib import Path

import pytest

from tabletop_rl import envs
from tabletop_rl.envs.core.options import markdown_table
from tabletop_rl.training.evaluation.tournament import tables

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "docs"))
from update_tables import render  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def test_readme_quickstart_runs_and_is_short():
    """The first run: make setup and the environment come first, then the Quickstart, which runs as printed."""
    readme = (ROOT / "README.md").read_text()
    first_run = readme[readme.index("## Install and first run"):readme.index("## Train and test")]
    assert first_run.index("make setup") < first_run.index(".venv/bin/python") < first_run.index("```python")
    block = re.search(r"```python\n(.*?)```", first_run, re.S).group(1)
    assert len(block.strip().splitlines()) <= 10
    outputs = []
    for _ in range(2):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(block, "README quickstart", "exec"), {})
        outputs.append(out.getvalue())
    scores, returns = outputs[0].split("] ")
    assert scores.startswith("[") and "[" in returns
    assert outputs[0] == outputs[1]  # seeded: the same game every time


def test_readme_commands_exist_in_makefile_and_ci():
    readme = (ROOT / "README.md").read_text()
    makefile = (ROOT / "Makefile").read_text()
    assert "make train" in readme and "make test" in readme
    assert re.search(r"^train:", makefile, re.M) and re.search(r"^test:", makefile, re.M)
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_docs_say_what_make_clean_removes_and_how_many_games_evaluate_plays():
    install = " ".join((ROOT / "docs" / "install.md").read_text().split())
    training = " ".join((ROOT / "docs" / "training.md").read_text().split())
    makefile = (ROOT / "Makefile").read_text()
    folders = dict(re.findall(r"^(\w+) \?= (\S+)$", makefile, re.M))
    recipe = re.search(r"^clean:\n\trm -rf (.*)$", makefile, re.M).group(1)
    venvs = [folders[word[2:-1]] for word in recipe.split() if word.startswith("$(")]  # the rest are caches
    said = re.search(r"removes (.*?), the caches and what building a wheel leaves \(`build/`, `\*.egg-info`\); "
                     r"never `runs/`", install).group(1)
    assert len(venvs) == 2 and said == ", ".join(f"`{venv}/`" for venv in venvs)  # .venv and .venv-rllib
    assert {"build", "*.egg-info"} <= set(recipe.split())
    assert f"`--games 40` plays {40 * len(tables(3, 4))} games" in training  # 3 agents at 4 players
    assert f"({len(tables(3, 2))} tables for 3 agents)" in training


@pytest.mark.parametrize("name", envs.list_games())
def test_game_doc_tables_are_generated_from_the_code(name):
    """docs/<game>.md holds the options table, an observation layout and (once the game has one) the global
    state's layout, exactly as the code makes them."""
    doc = (ROOT / "docs" / f"{name}.md").read_text()
    assert "<!-- generated: options -->" in doc and "<!-- generated: layout {} -->" in doc
    assert render(doc, name) == doc, "run: python docs/update_tables.py"
    game_class = envs.game_class(name)
    assert markdown_table(game_class.option_schema) in doc
    assert game_class().layout.to_markdown() in doc
    if hasattr(game_class(), "state_layout"):  # a game with a global state documents it the same way
        assert "<!-- generated: state_layout {} -->" in doc and game_class().state_layout.to_markdown() in doc


def test_readme_lists_every_registered_game():
    readme = (ROOT / "README.md").read_text()
    for name in envs.list_games():
        assert f"(`{name}`)" in readme


@pytest.mark.parametrize("name", envs.list_games())
def test_env_docstrings_carry_the_observation_table(name):
    module = envs.game_module(name)
    table = module.Game().layout.to_markdown()
    assert table in module.env.__doc__ and table in module.raw_env.__doc__


@pytest.mark.parametrize("name", envs.list_games())
def test_readme_game_table_gives_the_real_sizes(name):
    row = next(line for line in (ROOT / "README.md").read_text().splitlines() if f"(`{name}`)" in line)
    game_class = envs.game_class(name)
    assert str(game_class().num_actions) in row and str(game_class().observation_size) in row


def test_readme_is_read_in_two_minutes():
    """What it is and a picture, then install and first run, train and test, where to go next; the layout a table,
    the long text in docs/: at most 110 lines, and every file it links to exists."""
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 110
    picture = re.search(r"!\[[^\]]+\]\(([^)]+)\)", readme)
    sections = [readme.index(f"## {name}\n") for name in ("Install and first run", "Train and test",
                                                             "Where to go next")]
    assert picture and picture.start() < sections[0] and sections == sorted(sections)
    assert (ROOT / picture.group(1)).is_file()
    assert "## Layout\n\n| Folder | What |" in readme
    links = [link for link in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme) if "://" not in link]
    assert links and [link for link in links if not (ROOT / link).exists()] == []

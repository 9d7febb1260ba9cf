"""The one import path, ``tabletop_rl`` (issue 12): a source checkout and an installed copy, used from a project
that has its own ``envs/`` and ``training/`` packages, both give this repository's games, each module once, and
map exactly ``envs/`` and ``training/`` into ``tabletop_rl`` (issue 25); the light install needs no torch."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from fnmatch import fnmatch
from pathlib import Path

import gymnasium
import pettingzoo
import pytest

import tabletop_rl
from tabletop_rl import envs
from tabletop_rl.envs.core import extras
from tabletop_rl.envs.core.extras import install_hint
from tabletop_rl.training.runtime.single_seat import SingleSeatEnv, single_seat_env

ROOT = Path(__file__).resolve().parents[1]

# Run in a child process whose current directory holds the decoy packages (the current directory comes first
# on sys.path). Prints where its packages came from.
CHILD = """
import importlib, json, sys
import gymnasium, pettingzoo
import tabletop_rl
from tabletop_rl.training.runtime.agents import load_agent
from tabletop_rl.training.runtime.single_seat import SingleSeatEnv

for name in tabletop_rl.list_games():
    env = tabletop_rl.make(name)
    env.reset(seed=0)
    state = env.state()
    assert env.state_space.contains(state) and state.shape == env.state_space.shape, name
    assert type(pettingzoo.make("aec", tabletop_rl.env_id(name)).unwrapped) is type(env.unwrapped), name
    assert isinstance(gymnasium.make(tabletop_rl.env_id(name), opponent="heuristic").unwrapped, SingleSeatEnv), name
load_agent("pretrained", tabletop_rl.make("lost_cities", wrapped=False).game)  # package data, numpy only
top_level = sorted({module.split(".")[0] for module in sys.modules} & {"envs", "training"})
unmapped = []  # tabletop_rl is tabletop_rl/, envs/ and training/: the checkout's other folders are not in it
for name in ("tests", "benchmarks", "docs", "examples", "configs", "tabletop_rl"):
    try:
        importlib.import_module(f"tabletop_rl.{name}")
    except ModuleNotFoundError as error:
        assert error.name == f"tabletop_rl.{name}", error
    else:
        unmapped.append(name)
print(json.dumps({"games": tabletop_rl.list_games(), "top_level": top_level, "unmapped": unmapped,
                  "version": tabletop_rl.__version__,
                  "tabletop_rl": tabletop_rl.__file__, "envs": tabletop_rl.envs.__file__,
                  "training": tabletop_rl.training.__file__}))
"""


def run_beside_decoys(tmp_path: Path, pythonpath: Path) -> dict:
    """Runs CHILD from a folder with decoy ``envs`` and ``training`` packages that fail if imported."""
    work = tmp_path / "research_repo"
    for decoy in ("envs", "training"):
        (work / decoy).mkdir(parents=True)
        (work / decoy / "__init__.py").write_text(f"raise ImportError('the decoy {decoy} package was imported')\n")
    done = subprocess.run([sys.executable, "-c", CHILD], cwd=work, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(pythonpath)})
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.splitlines()[-1])
    assert found["games"] == envs.list_games() and found["top_level"] == [] and found["unmapped"] == []
    assert found["version"] == tabletop_rl.__version__  # pyproject.toml's, from the checkout or the installed metadata
    return found


def test_source_checkout_beside_decoys(tmp_path):
    found = run_beside_decoys(tmp_path, ROOT)
    assert found["tabletop_rl"] == str(ROOT / "tabletop_rl" / "__init__.py")
    assert found["envs"] == str(ROOT / "envs" / "__init__.py")
    assert found["training"] == str(ROOT / "training" / "__init__.py")


@pytest.mark.slow
def test_installed_copy_beside_decoys(tmp_path):
    """A real (non-editable) install by pip and setuptools, offline, of the files the build needs."""
    pytest.importorskip("setuptools", reason="the dev extra installs setuptools")
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    for folder in ("tabletop_rl", "envs", "training"):
        shutil.copytree(ROOT / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__"))
    site = tmp_path / "site"
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                          "--no-index", "--target", str(site), str(source)], capture_output=True, text=True,
                         timeout=300)
    assert pip.returncode == 0, pip.stderr
    found = run_beside_decoys(tmp_path, site)
    assert found["tabletop_rl"] == str(site / "tabletop_rl" / "__init__.py")
    assert found["envs"] == str(site / "tabletop_rl" / "envs" / "__init__.py")
    assert found["training"] == str(site / "tabletop_rl" / "training" / "__init__.py")


def setuptools_config() -> dict:
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def test_pyproject_lists_every_package_and_data_file():
    """``packages`` in pyproject.toml must name every folder with an ``__init__.py`` (a new game package too) or
    with data files, and ``package-data`` every such file under envs/ and training/ (policies loaded at
    runtime). Data folders are listed as packages too: setuptools warns about unlisted ones."""
    config = setuptools_config()
    folders = {"tabletop_rl": ROOT / "tabletop_rl"} | {
        ".".join((package, *path.parent.relative_to(ROOT / folder).parts)): path.parent
        for package, folder in config["package-dir"].items() for path in (ROOT / folder).rglob("*")
        if path.is_file() and path.parent.name != "__pycache__"
        and (path.name == "__init__.py" or path.suffix != ".py")}
    assert sorted(config["packages"]) == sorted(folders)
    for root in {ROOT / "tabletop_rl", *(ROOT / folder for folder in config["package-dir"].values())}:
        for path in root.rglob("*"):
            if path.is_file() and path.suffix not in (".py", ".pyc") and path.parent.name != "__pycache__":
                owner = max((p for p, f in folders.items() if path.is_relative_to(f)), key=len)
                relative = path.relative_to(folders[owner]).as_posix()
                assert any(fnmatch(relative, pattern) for pattern in config["package-data"].get(owner, [])), path


def test_one_object_behind_every_name():
    assert tabletop_rl.envs is envs and tabletop_rl.make is envs.make and tabletop_rl.list_games is envs.list_games
    spec = gymnasium.spec(tabletop_rl.env_id("lost_cities"))
    assert gymnasium.envs.registration.load_env_creator(spec.entry_point) is single_seat_env
    assert isinstance(gymnasium.make(tabletop_rl.env_id("lost_cities")).unwrapped, SingleSeatEnv)
    torres = pettingzoo.make("aec", tabletop_rl.env_id("torres"))
    assert type(torres.unwrapped) is type(tabletop_rl.make("torres").unwrapped)


@pytest.mark.parametrize(("command", "hint"), [
    (["-c", "import envs"], "import tabletop_rl (or tabletop_rl.envs), not envs"),
    (["-m", "training.train", "--help"], "python -m tabletop_rl.training.train"),
])
def test_old_top_level_names_fail_clearly(command, hint):
    """From the checkout, ``envs`` and ``training`` would be second copies of the packages: refused, with a hint."""
    done = subprocess.run([sys.executable, *command], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and hint in done.stderr


OLD_IMPORT = re.compile(r"^\s*(?:import|from)\s+(?:envs|training)\b|-m\s+(?:envs|training)\.", re.MULTILINE)


def test_nothing_uses_the_old_top_level_names():
    """Code, docs, configs and commands name ``tabletop_rl.envs`` / ``tabletop_rl.training``, never ``envs`` or
    ``training`` at top level, which would be second copies of the packages (or a research repo's folders)."""
    files = [ROOT / name for name in ("README.md", "Makefile", ".ci/run")] + [
        path for folder in ("tabletop_rl", "envs", "training", "tests", "benchmarks", "examples", "docs", "configs")
        for path in (ROOT / folder).rglob("*") if path.suffix in (".py", ".md", ".yaml")]
    offenders = [f"{path.relative_to(ROOT)}: {match.group(0).strip()}" for path in files
                 if path != Path(__file__).resolve() for match in OLD_IMPORT.finditer(path.read_text())]
    assert offenders == []


# The light install (pip install -e .): no torch, stable-baselines3, matplotlib, tensorboard or ray.
NOT_IN_THE_LIGHT_INSTALL = ("torch", "stable_baselines3", "sb3_contrib", "matplotlib", "tensorboard", "ray")


def test_play_time_and_evaluation_need_no_torch():
    """Every module of ``training/runtime``, ``training/evaluation`` and ``training/cli`` (what the commands
    share), the commands ``play``, ``evaluate``, ``replay`` and ``web`` import with the training extras missing
    (``None`` in ``sys.modules`` fails an import); ``train`` says which extra it needs."""
    modules = ["tabletop_rl.training." + ".".join(path.relative_to(ROOT / "training").with_suffix("").parts)
               for folder in ("runtime", "evaluation", "cli")
               for path in sorted((ROOT / "training" / folder).glob("*.py"))]
    modules += [f"tabletop_rl.training.{name}" for name in ("play", "evaluate", "replay", "web")]
    code = (f"import importlib, sys\nsys.modules.update(dict.fromkeys({NOT_IN_THE_LIGHT_INSTALL!r}))\n"
            f"for name in {modules!r}:\n    importlib.import_module(name)\n"
            "import tabletop_rl.training.train\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr == ("training needs the 'train' extra (torch is not installed): "
                           "pip install -e '.[train]'\n")



def test_envs_and_training_import_each_other_relatively():
    """Inside the two mapped folders every import of the project is relative (``from ..core.game import State``),
    so that tools and readers can follow it without knowing the mapping."""
    import ast

    absolute = []
    for path in sorted([*(ROOT / "envs").rglob("*.py"), *(ROOT / "training").rglob("*.py")]):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
            absolute += [f"{path.relative_to(ROOT)}:{node.lineno} {n}" for n in names
                         if n.split(".")[0] == "tabletop_rl"]
    assert not absolute, "absolute imports of tabletop_rl:\n" + "\n".join(absolute)


def test_play_time_imports_no_command_line_code():
    """``training/runtime`` (play time, the Gymnasium envs) imports nothing of ``training/cli`` (the commands' own
    code): dependencies go down docs/training.md's table of folders only."""
    import ast

    upward = []
    for path in sorted((ROOT / "training" / "runtime").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 2 and (node.module or "").split(".")[0] == "cli":
                upward.append(f"{path.relative_to(ROOT)}:{node.lineno} ..{node.module}")
            if isinstance(node, ast.ImportFrom) and node.level == 2 and node.module is None and \
                    any(alias.name == "cli" for alias in node.names):
                upward.append(f"{path.relative_to(ROOT)}:{node.lineno} .. import cli")
    assert not upward, "training/runtime imports training/cli:\n" + "\n".join(upward)


def test_training_top_level_holds_the_commands():
    """Every module at ``training/``'s top level is a command run as ``python -m tabletop_rl.training.<name>``: a
    ``main`` and the ``__main__`` guard; and every command of the docs is one of them."""
    commands = sorted(path.stem for path in (ROOT / "training").glob("*.py") if path.stem != "__init__")
    assert commands == ["evaluate", "expert_iteration", "play", "replay", "rllib", "train", "web"]
    for name in commands:
        text = (ROOT / "training" / f"{name}.py").read_text()
        assert "\ndef main(" in text and '\nif __name__ == "__main__":\n' in text, name
    documented = set(re.findall(r"python -m tabletop_rl\.training\.(\w+)", (ROOT / "docs" / "training.md").read_text()))
    assert documented <= set(commands)


def test_install_hints_fit_where_the_package_lives(monkeypatch, tmp_path):
    """A checkout installs its own folder (``.`` from inside it, its path from elsewhere); an installed copy names
    the package on the index."""
    monkeypatch.chdir(ROOT)
    assert install_hint("plot") == "pip install -e '.[plot]'"
    monkeypatch.chdir(tmp_path)
    assert install_hint("plot") == f"pip install -e '{ROOT.resolve()}[plot]'"
    monkeypatch.setattr(extras, "CHECKOUT", tmp_path)  # as in site-packages: no pyproject.toml beside envs/
    assert install_hint("render") == "pip install 'tabletop-rl[render]'"


@pytest.mark.parametrize(("module", "missing", "extra"), [
    ("tabletop_rl.openspiel", "pyspiel", "openspiel"),
    ("tabletop_rl.training.interop.torchrl", "torchrl", "torchrl"),
    ("tabletop_rl.training.interop.rllib_env", "ray", "rllib"),
])
def test_an_adapter_without_its_extra_names_the_extra(module, missing, extra):
    """Imported where its package is missing (``None`` in sys.modules hides an installed one), an adapter ends in one
    line naming the extra and how to install it, not in ``No module named 'pyspiel'``."""
    code = f"import sys; sys.modules[{missing!r}] = None; import {module}"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    last = done.stderr.strip().splitlines()[-1]
    assert done.returncode == 1 and last == (f"ModuleNotFoundError: {module} needs the '{extra}' extra ({missing} is "
                                             f"not installed): {install_hint(extra)}"), done.stderr

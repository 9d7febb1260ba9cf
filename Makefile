# tabletop-rl — every target sets up its own virtual environment first, so each works on a fresh clone.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cksum pyproject.toml | cut -d' ' -f1)
# envs/ and training/ are installed as tabletop_rl.envs and .training (package-dir), so setuptools installs the
# checkout through an import hook and always adds its note "Editable installation ... folders in your working
# directory with the same name as your package": here that folder, tabletop_rl/, is the package itself.
EDITABLE := PYTHONWARNINGS="ignore:Editable installation"

.PHONY: setup test train bench lint clean setup-rllib test-rllib

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# torch first and pinned: 2.13.0 is the CPU build available offline on this machine
	$(PY) -m pip install --quiet torch==2.13.0
	$(EDITABLE) $(PY) -m pip install --quiet -e ".[train,bench,dev,torchrl,web,openspiel,render]"
	rm -f $(VENV)/.installed-*
	touch $@

## Run the whole test suite (what CI runs).
test: setup
	$(PY) -c "import torchrl"  # pytest would only skip tests/test_torchrl.py without it
	$(PY) -c "import pyspiel"  # pytest would only skip the OpenSpiel tests without it
	@$(PY) -m pytest -q -n auto; status=$$?; \
	if [ $$status -eq 5 ]; then echo "pytest collected no tests: the suite is broken" >&2; fi; \
	exit $$status
	@$(MAKE) --no-print-directory test-rllib

## The main job: train the default Lost Cities agent for a few minutes on CPU, evaluate it, print the report.
## Each run gets a folder of its own (runs/lost_cities, runs/lost_cities-2, ...): earlier runs are kept.
train: setup
	$(PY) -m tabletop_rl.training.train --config configs/lost_cities.yaml

## Throughput of every game against PettingZoo's connect_four; learner steps/s of every env path and PPO steps/s of
## every shipped config, short (the full run, before and after side by side: docs/performance.md).
bench: setup
	$(PY) benchmarks/throughput.py
	$(PY) benchmarks/learner_throughput.py --quick

lint: setup
	$(PY) -m ruff check envs training tests benchmarks examples tabletop_rl

## Removes both virtual environments (.venv, .venv-rllib), the caches and what building a wheel leaves (build/,
## *.egg-info); never runs/ (your trained agents and reports) nor dist/ (the wheels you built).
clean:
	rm -rf $(VENV) $(VENV_RLLIB) .pytest_cache .ruff_cache build *.egg-info

# ---- RLlib (docs/rllib.md): a venv of its own, because ray[rllib] pins another gymnasium than .venv's.
VENV_RLLIB ?= .venv-rllib
PY_RLLIB := $(VENV_RLLIB)/bin/python
STAMP_RLLIB := $(VENV_RLLIB)/.installed-$(shell cksum pyproject.toml | cut -d' ' -f1)

setup-rllib: $(STAMP_RLLIB)

$(STAMP_RLLIB): pyproject.toml
	$(PYTHON) -m venv $(VENV_RLLIB)
	$(PY_RLLIB) -m pip install --quiet --upgrade pip
	$(PY_RLLIB) -m pip install --quiet torch==2.13.0
	$(EDITABLE) $(PY_RLLIB) -m pip install --quiet -e ".[dev,rllib,render]"
	rm -f $(VENV_RLLIB)/.installed-*
	touch $@

## The RLlib tests (part of `make test`): a 2-iteration run on a local Ray, its export and evaluation; and the
## Gymnasium ids under the gymnasium version ray[rllib] brings (1.2.x).
test-rllib: setup-rllib
	$(PY_RLLIB) -c "import ray.rllib"  # pytest would only skip the tests without it
	$(PY_RLLIB) -m pytest -q tests/test_rllib.py tests/test_gymnasium.py

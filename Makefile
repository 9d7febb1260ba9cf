# tabletop-rl — every target sets up its own virtual environment first, so each works on a fresh clone.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cksum pyproject.toml | cut -d' ' -f1)

.PHONY: setup test train bench lint clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# torch first and pinned: 2.13.0 is the CPU build available offline on this machine
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e ".[train,bench,dev]"
	rm -f $(VENV)/.installed-*
	touch $@

## Run the whole test suite (what CI runs).
test: setup
	@$(PY) -m pytest -q; status=$$?; \
	if [ $$status -eq 5 ]; then echo "pytest collected no tests: the suite is broken" >&2; fi; \
	exit $$status

## The main job: train the default Lost Cities agent for a few minutes on CPU, evaluate it, print the report.
## Each run gets a folder of its own (runs/lost_cities, runs/lost_cities-2, ...): earlier runs are kept.
train: setup
	$(PY) -m training.train --config configs/lost_cities.yaml

## Throughput of every game against PettingZoo's connect_four.
bench: setup
	$(PY) benchmarks/throughput.py

lint: setup
	$(PY) -m ruff check envs training tests benchmarks

## Removes the virtual environment and caches; never runs/ (your trained agents and reports).
clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache

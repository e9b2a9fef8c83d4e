# The two set-up commands of the README:
#   make demo   - create .venv, install heta-nb with the [heta] extra, run the demo end to end
#   make test   - create .venv, install the test dependencies (and Chromium), run the whole suite
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip

.PHONY: demo lab test test-fast test-pythons test-min bench lint clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip

# Stamps re-run pip only when pyproject.toml changes.
$(VENV)/.installed-demo: pyproject.toml | $(BIN)/python
	$(PIP) install -q -e '.[heta]'
	touch $@

# The optional integrations are tested here; tests/other-pythons.sh runs without them.
$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(PIP) install -q -e '.[heta,test,dask,mlflow,parquet]'
	VENV=$(VENV) bash tests/fetch-junit-xsd.sh
	touch $@ $(VENV)/.installed-demo

demo: $(VENV)/.installed-demo
	$(BIN)/python -m heta_nb demo

# JupyterLab with what the notebooks need ([heta] and the [notebooks] extra), opened on notebooks/.
$(VENV)/.installed-lab: pyproject.toml | $(BIN)/python
	$(PIP) install -q -e '.[heta,notebooks]'
	touch $@

lab: $(VENV)/.installed-lab
	$(BIN)/python -m jupyter lab notebooks/

test: $(VENV)/.installed-test
	bash tests/browser/install-chromium.sh
	$(BIN)/python -m pytest

test-fast: $(VENV)/.installed-test
	$(BIN)/python -m pytest -m "not browser and not slow"

# The fast suite on the other supported Pythons, where this machine has them (pyenv).
OTHER_PYTHONS ?= 3.10 3.12 3.13
test-pythons:
	bash tests/other-pythons.sh $(OTHER_PYTHONS)

# The fast suite on the lowest versions pyproject.toml declares (numpy 1.24, pandas 2.0...).
test-min:
	bash tests/min-versions.sh

bench: $(VENV)/.installed-test
	for script in benchmarks/*.py; do echo "== $$script"; $(BIN)/python $$script || exit 1; done

lint: $(VENV)/.installed-test
	$(PIP) install -q ruff mypy
	$(BIN)/python -m ruff check heta_nb tests benchmarks
	$(BIN)/python -m mypy

clean:
	rm -rf $(VENV) .venv-py* .venv-min demo-output demo-store test-artifacts .pytest_cache

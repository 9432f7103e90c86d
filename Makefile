# Quick start: `make demo`, then `make test`. Both build .venv from nothing when it is missing.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install demo test test-minimum bench browser clean

install: $(STAMP)

# pip installs without compiling (--no-compile: pip compiles some 11,000 modules one after the other, 41 s
# where the install alone takes 17 s); then compileall writes the bytecode of all of them, on every core
# (COMPILE). Without it, Python would compile each module the first time it is imported and keep it, unless
# PYTHONDONTWRITEBYTECODE is set in the user's environment: then every call (`castregin trec_eval` in a
# script's loop) would compile click, pandas and castregin again, 0.1 s on a 10-line call, 1 s on aggregate.
# A module that does not compile (a package may ship templates that are not Python) is left as it is. The
# commands here run without PYTHONDONTWRITEBYTECODE, so that what they import is compiled once too.
unexport PYTHONDONTWRITEBYTECODE
PIP_INSTALL = -m pip install --quiet --no-compile
COMPILE = -m compileall -q -j 0

# Reinstalled whenever pyproject.toml or the tested set changes; `-e` so that the tests run the working tree.
$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python $(PIP_INSTALL) --upgrade pip
	$(BIN)/python $(PIP_INSTALL) -c constraints.txt -e '.[test]'
	$(BIN)/python $(COMPILE) $(VENV)/lib castregin >/dev/null || true
	touch $(STAMP)

# The whole pipeline on the sample data in data/: aggregate, convert, pool, evaluate, compare, report.
demo: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" bash data/demo.sh

# The browser tests (report, judging pages) need Debian's chromium; without it (no root, no apt) they are skipped.
# Its recommends are daemons and desktop tools a headless browser does not run (udev, upower, a printer
# dialog, a notification daemon: 115 packages with them, 26 without); of them only the fonts are kept.
browser:
	@command -v chromium >/dev/null 2>&1 || { command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] \
	  && (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	      chromium fonts-liberation) >/dev/null 2>&1; } \
	  || echo "chromium is not installed: the browser tests will be skipped"

# A worker per core (-n auto), each taking whole test files (pyproject.toml). PYTEST_WORKERS=0: no worker.
PYTEST_WORKERS ?= auto
PYTEST_PARALLEL := -n $(PYTEST_WORKERS)

test: $(STAMP) browser
	$(BIN)/python -m pytest $(PYTEST_PARALLEL)

# The same tests with the oldest versions pyproject.toml allows (constraints-minimum.txt), in .venv-min.
MIN_VENV := .venv-min
$(MIN_VENV)/.installed: pyproject.toml constraints-minimum.txt
	test -x $(MIN_VENV)/bin/python || $(PYTHON) -m venv $(MIN_VENV)
	$(MIN_VENV)/bin/python $(PIP_INSTALL) --upgrade pip
	$(MIN_VENV)/bin/python $(PIP_INSTALL) -c constraints-minimum.txt -e '.[test]'
	$(MIN_VENV)/bin/python $(COMPILE) $(MIN_VENV)/lib castregin >/dev/null || true
	touch $(MIN_VENV)/.installed

test-minimum: $(MIN_VENV)/.installed browser
	$(MIN_VENV)/bin/python -m pytest -p no:cacheprovider $(PYTEST_PARALLEL)

# The documentation site (docs/, mkdocs.yml) in site/, built offline: `--strict` fails on a broken link or
# anchor, then docs/check_site.py fails on anything a page would fetch from the network. Its tools (the docs
# extra) go into .venv only here, so `make test` never needs them, and `make docs` needs no test extra.
DOCS_STAMP := $(VENV)/.installed-docs
$(DOCS_STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[docs]'
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/python -m mkdocs build --strict --clean --site-dir site
	$(BIN)/python docs/check_site.py site

# docs/cli.md, the command reference, from the commands' own --help: rerun after changing a command's help.
docs-cli: $(STAMP)
	$(BIN)/python docs/gen_cli.py

# docs/measures.md, the measure catalogue, from the measure registry: rerun after declaring or changing a measure.
docs-measures: $(STAMP)
	$(BIN)/python docs/gen_measures.py

.PHONY: docs docs-cli docs-measures clean-docs
clean: clean-docs
clean-docs:
	rm -rf site

# ruff and mypy, as configured in pyproject.toml ([tool.ruff], [tool.mypy]): no finding, no error. Their
# tools (the lint extra) go into .venv only here, so `make test` never needs them.
LINT_STAMP := $(VENV)/.installed-lint
$(LINT_STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[lint]'
	touch $(LINT_STAMP)

lint: $(LINT_STAMP)
	$(BIN)/python -m ruff check .
	$(BIN)/python -m mypy

.PHONY: lint

bench: $(STAMP)
	$(BIN)/python benchmarks/run.py

clean:
	rm -rf $(VENV) $(MIN_VENV) .venv-bench out bench-out .pytest_cache

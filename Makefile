# Quick start: `make demo`, then `make test`. Both build .venv from nothing when it is missing.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install demo test bench browser clean

install: $(STAMP)

# Reinstalled whenever pyproject.toml changes; `-e` so that the tests run the working tree.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

# The whole pipeline on the sample data in data/: aggregate, convert, pool, evaluate, compare, report.
demo: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" bash data/demo.sh

# The report's browser test needs Debian's chromium; without it (no root, no apt) that test is skipped.
browser:
	@command -v chromium >/dev/null 2>&1 || { command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] \
	  && (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null 2>&1; } \
	  || echo "chromium is not installed: the report's browser test will be skipped"

test: $(STAMP) browser
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python benchmarks/run.py

clean:
	rm -rf $(VENV) .venv-bench out bench-out .pytest_cache

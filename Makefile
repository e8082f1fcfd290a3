# Every target installs what it needs into .venv first.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install test demo bench lint fix schema-doc clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

PATH_HINT = @echo "The CLI is .venv/bin/jurybench: run 'source .venv/bin/activate' to put jurybench on your PATH."

install: $(STAMP)
	$(PATH_HINT)

test: $(STAMP)
	$(BIN)/python -m pytest -q

demo: $(STAMP)
	PATH=$(abspath $(BIN)):$$PATH bash scripts/demo.sh
	$(PATH_HINT)

bench: $(STAMP)
	$(BIN)/python bench/run.py

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy

fix: $(STAMP)
	$(BIN)/ruff check --fix src tests bench
	$(BIN)/ruff format src tests bench

schema-doc: $(STAMP)
	$(BIN)/jurybench schema --format markdown > docs/schema.md

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache

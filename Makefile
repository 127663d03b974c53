# The entry points for people and CI. `make run` and `make test` do all set-up themselves.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml requirements.lock | cksum | cut -d' ' -f1)
HOST ?= 127.0.0.1
PORT ?= 8000
PYTEST_WORKERS ?= 2

.PHONY: setup run test lint format bench fuzz clean

setup: $(STAMP)

$(STAMP): pyproject.toml requirements.lock
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c requirements.lock -e '.[dev]'
	rm -f $(VENV)/.installed-*
	touch $@

run: setup
	$(BIN)/sprintboard migrate
	$(BIN)/sprintboard serve --host $(HOST) --port $(PORT)

test: setup
	$(BIN)/pytest -n $(PYTEST_WORKERS) --durations=25 --cov --cov-report=term $(PYTEST_ARGS)

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy src bench

bench: setup
	$(BIN)/python -m bench $(if $(QUICK),--quick)

fuzz: setup
	$(BIN)/pytest -p no:xdist tests/fuzz --fuzz-examples=$(or $(EXAMPLES),500)

format: setup
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache

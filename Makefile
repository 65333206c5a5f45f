# Everything runs in .venv, made on first use. `make help` lists the targets.
PYTHON ?= python3
VENV ?= .venv
BIN = $(VENV)/bin
EXAMPLE_METRICS = ndcg@10,map@10,mrr@10,precision@5,recall@20,hit_rate@10,f1@10

.PHONY: help example test lint unit format clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(VENV)/.installed $@

example: $(VENV)/.installed ## install, then evaluate the bundled example data on DuckDB
	$(BIN)/sqlmetrics evaluate examples/recommendations.parquet examples/interactions.parquet \
		-m $(EXAMPLE_METRICS) --group-by model

test: lint unit ## install with the dev tools, lint, type-check and run the whole test suite

unit: $(VENV)/.installed-dev ## the test suite only
	$(BIN)/python -m pytest

lint: $(VENV)/.installed-dev ## ruff and mypy
	$(BIN)/ruff check sqlmetrics tests examples bench
	$(BIN)/ruff format --check sqlmetrics tests examples bench
	$(BIN)/mypy

format: $(VENV)/.installed-dev ## apply ruff's formatting and fixes
	$(BIN)/ruff format sqlmetrics tests examples bench
	$(BIN)/ruff check --fix sqlmetrics tests examples bench

clean: ## remove the virtual environment and caches
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build dist

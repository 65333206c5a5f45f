# Everything runs in .venv, made on first use. `make help` lists the targets.
PYTHON ?= python3
VENV ?= .venv
BIN = $(VENV)/bin
FAKESNOW = $(VENV)/fakesnow
DBT_VENV ?= .venv-dbt
PROFILES_VENV = .venv-profiles
OBP_VENV = .venv-obp
EXAMPLE_METRICS = ndcg@10,map@10,mrr@10,precision@5,recall@20,hit_rate@10,f1@10
# The same page as `sqlmetrics example --report FILE` (sqlmetrics/cli/example.py,
# EXAMPLE_REPORT). The file is replaced only if it is a page sqlmetrics wrote (sqlmetrics/io/files.py).
EXAMPLE_REPORT_METRICS = ndcg@10,map@10,recall@20,hit_rate@10,gini@10,novelty@10
EXAMPLE_REPORT ?= example-report.html

.PHONY: help example test lint unit format clean engines test-engines snapshots docs docs-site dbt profiles-venv obp-venv

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-13s %s\n", $$1, $$2}'

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[report]"
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(VENV)/.installed $@

$(VENV)/.installed-docs: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[docs]"
	touch $@

$(VENV)/.installed-engines: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[dev,engines]"
	touch $(VENV)/.installed $(VENV)/.installed-dev $@

# fakesnow pins its own sqlglot and duckdb, so it lives in a virtual environment of its own;
# the tests talk to it through tests/engines/fakesnow_runner.py, and run evaluate through its
# patched connector with tests/engines/fakesnow_evaluate.py (hence pandas and pyyaml there).
# fakesnow rewrites every query through sqlglot: its pinned version's compiled build
# (sqlglot[c]) does the same faster, as in the dev extra (docs/benchmark.md, the suite's time).
$(FAKESNOW)/.installed: | $(BIN)/python  # inside .venv: made after it, under make -j too
	$(PYTHON) -m venv $(FAKESNOW)
	$(FAKESNOW)/bin/python -m pip install --quiet "fakesnow>=0.12.1,<0.13" "snowflake-connector-python<5" \
		"pandas>=2.0" "pyyaml>=6" "sqlglot[c]"
	touch $@

# dbt-core pins its own dependencies, so it lives in a virtual environment of its own too; the
# tests run its dbt (tests/engines/test_dbt.py) on the package `sqlmetrics dbt export` writes.
$(DBT_VENV)/.installed:
	$(PYTHON) -m venv $(DBT_VENV)
	$(DBT_VENV)/bin/python -m pip install --quiet "dbt-core>=1.10,<1.11" "dbt-duckdb>=1.10,<1.11" \
		"dbt-postgres>=1.10,<1.11"
	touch $@

dbt: $(DBT_VENV)/.installed ## install dbt-core, dbt-duckdb and dbt-postgres into .venv-dbt

# The libraries the definition profiles are compared with (tests/test_profiles.py runs them
# through tests/profile_runner.py; tests/test_beyond.py cross-checks the beyond-accuracy metrics
# with RecTools and MS Recommenders from here too, tests/test_intents.py the intent-aware ones
# with ndeval, through pyndeval): they pin their own numpy, pandas and torch (CPU), so they get
# a virtual environment of their own. About 2 minutes and 2.6 GB.
$(PROFILES_VENV)/.installed:
	$(PYTHON) -m venv $(PROFILES_VENV)
	$(PROFILES_VENV)/bin/python -m pip install --quiet "torch==2.13.0" "torchmetrics==1.9.0" \
		"rectools==0.19.0" "recommenders==1.2.1" "replay-rec==0.22.0" "lenskit==2025.8.1" \
		"pyndeval==0.0.8"
	touch $@

profiles-venv: $(PROFILES_VENV)/.installed ## the libraries the definition profiles are tested against

# Open Bandit Pipeline, which tests/test_off_policy.py compares the off-policy estimates with
# (through tests/obp_runner.py). obp 0.5.7, its last release, declares Python below 3.11 and pins
# releases of numpy, pandas, scikit-learn and Pillow that have no wheels for 3.11; its code runs
# on today's releases, so it is installed without its declared dependencies, and those (torch
# CPU among them: obp.utils imports it) at versions that do. About 1 minute and 1.5 GB.
$(OBP_VENV)/.installed:
	$(PYTHON) -m venv $(OBP_VENV)
	$(OBP_VENV)/bin/python -m pip install --quiet --no-deps --ignore-requires-python "obp==0.5.7"
	$(OBP_VENV)/bin/python -m pip install --quiet "torch==2.13.0" "numpy==2.4.6" "scipy==1.17.1" \
		"scikit-learn==1.9.1" "pandas==3.1.1" "matplotlib==3.11.2" "seaborn==0.13.2" \
		"tqdm==4.70.1" "pyyaml==6.0.4" "mypy-extensions==1.2.0"
	touch $@

obp-venv: $(OBP_VENV)/.installed ## Open Bandit Pipeline, which the off-policy estimates are tested against

example: $(VENV)/.installed ## install, evaluate the bundled example data on DuckDB, write its report
	$(BIN)/sqlmetrics evaluate examples/recommendations.parquet examples/interactions.parquet \
		-m $(EXAMPLE_METRICS) --group-by model
	$(BIN)/sqlmetrics report examples/recommendations.parquet examples/interactions.parquet \
		-m $(EXAMPLE_REPORT_METRICS) --group-by model --segment country --baseline popularity \
		--k-max 30 -o $(EXAMPLE_REPORT)

test: lint docs-site unit ## install with the dev tools, lint, type-check, build the site and run the whole test suite

# pytest-xdist, one worker per core; --dist loadgroup keeps each server engine's tests (and Spark's
# JVM, the memory tests' fixture) on one worker (tests/engines/conftest.py). PYTEST_WORKERS=0 runs
# in one process.
PYTEST_WORKERS ?= auto
PYTEST_PARALLEL = $(if $(filter 0,$(PYTEST_WORKERS)),,-n $(PYTEST_WORKERS) --dist loadgroup)
# The quick tier runs first and stops at its first failure (a broken contract shows in seconds);
# then the rest. Together they are the whole suite, which `python -m pytest` alone also runs.
QUICK_TESTS = tests/test_contracts.py tests/test_api.py tests/test_bad_input.py \
	tests/test_cli_sql.py tests/test_packaging.py

unit: $(VENV)/.installed-dev ## the test suite only: the quick tier, then the rest, in parallel
	$(BIN)/python -m pytest -x $(QUICK_TESTS)
	$(BIN)/python -m pytest $(PYTEST_PARALLEL) $(addprefix --ignore=,$(QUICK_TESTS))

lint: $(VENV)/.installed-dev ## ruff and mypy
	$(BIN)/ruff check sqlmetrics tests examples bench docs/hooks
	$(BIN)/ruff format --check sqlmetrics tests examples bench docs/hooks
	$(BIN)/mypy

format: $(VENV)/.installed-dev ## apply ruff's formatting and fixes
	$(BIN)/ruff format sqlmetrics tests examples bench docs/hooks
	$(BIN)/ruff check --fix sqlmetrics tests examples bench docs/hooks

engines: $(VENV)/.installed-engines $(FAKESNOW)/.installed $(DBT_VENV)/.installed $(PROFILES_VENV)/.installed $(OBP_VENV)/.installed ## install the Python engines and the venvs of fakesnow, dbt, the profile libraries and OBP
	@echo "PostgreSQL and MariaDB: the tests start them when their binaries are installed"
	@echo "(apt-get install postgresql mariadb-server), or use SQLMETRICS_POSTGRES_DSN and"
	@echo "SQLMETRICS_MYSQL_HOST/PORT/USER; .ci/run does all of it."

test-engines: engines ## every metric on every engine and dialect (tests/engines, transpile, names)
	SQLMETRICS_FULL_MATRIX=1 $(BIN)/python -m pytest $(PYTEST_PARALLEL) tests/engines tests/test_dialects.py tests/test_identifiers.py

snapshots: $(VENV)/.installed-dev ## regenerate tests/snapshots/<dialect>/<metric>.sql; review the diff
	SQLMETRICS_UPDATE_SNAPSHOTS=1 $(BIN)/python -m pytest -q tests/test_dialects.py -k snapshot

# The markdown written from the code: README.md's and docs/METRICS.md's metric tables (from the
# headers of sql/*.sql), docs/profiles.md and fixtures/INDEX.md; tests/test_generated_docs.py and
# tests/test_profiles.py fail when one is stale.
docs: $(VENV)/.installed-dev ## rewrite the generated markdown (metric tables, profiles, fixture index)
	$(BIN)/python -c 'from sqlmetrics.cli.markdown import write_docs; write_docs()'
	$(BIN)/python -c 'from tests.fixture_index import write_index; write_index()'

# The documentation site (mkdocs.yml): every warning is an error (strict: true), so a broken link
# or a page missing from the navigation fails `make test` too. `mkdocs serve` shows it locally.
docs-site: $(VENV)/.installed-docs ## build the documentation site into build/site (warnings fail)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

clean: ## remove the virtual environment and caches
	rm -rf $(VENV) $(DBT_VENV) $(PROFILES_VENV) $(OBP_VENV) .pytest_cache .mypy_cache .ruff_cache build dist

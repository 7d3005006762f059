# Developer entry points. Everything installs into $(VENV); test data goes to a cache
# outside git (see scripts/fetch_testdata.py).
VENV ?= .venv
PYTHON := $(VENV)/bin/python
STAMP := $(VENV)/.installed.stamp

.PHONY: venv testdata test lint test-agents bench serve reliability

venv: $(STAMP)

# Redone only when pyproject.toml changes (or the venv is gone).
$(STAMP): pyproject.toml
	test -x $(PYTHON) || python3 -m venv $(VENV)
	$(PYTHON) -m pip install --quiet --upgrade pip
	$(PYTHON) -m pip install --quiet -e '.[dev]'
	touch $@

testdata: venv
	$(PYTHON) scripts/fetch_testdata.py

# pytest exits 5 when it collects no test: not a failure here.
test: venv testdata
	$(PYTHON) -m pytest -q || test $$? -eq 5

# ruff for bugs and style, mypy --strict for the core (lmparse/ outside serve/); config in pyproject.toml.
lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

# Real agent clients (Claude Code, Codex, Qwen Code, opencode from npm; llm from PyPI), pinned in
# tests/agents/ and installed once under ~/.cache/lmparse/agents, each run against `lmparse serve`
# with a private HOME.
test-agents: venv testdata
	LMPARSE_AGENTS_BIN="$$(scripts/setup_agents.sh)" $(PYTHON) -m pytest -q tests/agents

# Peers (LMDeploy's parsers, no torch) run from their own venv in bench/.peers/, built once.
bench: venv
	test -x bench/.peers/lmdeploy/bin/python || scripts/setup_bench_peers.sh
	$(PYTHON) -m bench --peers

# lmparse serve under 200 concurrent streams, 2 000 disconnects, hostile requests and upstream faults
# (reliability/); writes docs/reliability.md and fails if anything was lost. `make test` runs a reduced set.
reliability: venv testdata
	$(PYTHON) -m reliability --write docs/reliability.md

# OpenAI + Anthropic server on the simulated model (no weights, nothing downloaded): it prints
# a ready-to-paste curl and Python example. `make serve SERVE_ARGS="--family glm47 --port 9000"`.
SERVE_ARGS ?= --family qwen3
serve: venv
	$(VENV)/bin/lmparse serve $(SERVE_ARGS)

# Developer entry points. Everything installs into $(VENV); test data goes to a cache
# outside git (see scripts/fetch_testdata.py).
VENV ?= .venv
PYTHON := $(VENV)/bin/python
STAMP := $(VENV)/.installed.stamp

.PHONY: venv testdata test test-pythons compiled fuzz lint test-agents test-engines test-integrations test-conformance bench bench-peers bench-serving serve reliability

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
# Every suite on the pure core (the reference), then the parser suites on the compiled core
# (tests/conftest.py picks them): one test command for both cores (docs/compiled-core.md).
test: venv testdata compiled
	LMPARSE_PURE=1 $(PYTHON) -m pytest -q || test $$? -eq 5
	LMPARSE_CORE_EXPECTED=compiled $(PYTHON) -m pytest -q -p no:cacheprovider

# The other Pythons pyproject.toml claims (3.10, the oldest, and 3.12): the core's suites (those the
# compiled pass runs) on each, in a venv built once under ~/.cache/lmparse/pythons by
# scripts/setup_python.sh, importing this checkout. A claimed version not on the machine fails here.
PYTHONS ?= 3.10 3.12
test-pythons: testdata
	for v in $(PYTHONS); do \
		py="$$(scripts/setup_python.sh $$v)" && echo "Python $$v: $$py" && \
		PYTHONPATH="$(CURDIR)" LMPARSE_PURE=1 LMPARSE_CORE_EXPECTED=pure $$py -m pytest -q -p no:cacheprovider \
			--ignore=tests/engines --ignore=tests/agents --ignore=tests/integrations || exit 1; \
	done

# The compiled core (mypyc, from the same sources), built in place and cached under ~/.cache.
compiled: venv
	PYTHON=$(PYTHON) scripts/build_compiled.sh

# Exploratory fuzzing: the property-based tests with fresh random examples each run
# (make test runs them derandomized). A find becomes a FOUND case in tests/test_fuzz_all_parsers.py.
# The run's seed is printed first; `make fuzz FUZZ_SEED=N` runs those examples again.
FUZZ_SEED ?=
fuzz: venv testdata
	seed="$(FUZZ_SEED)"; [ -n "$$seed" ] || seed="$$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')"; \
	echo "make fuzz: hypothesis seed $$seed (make fuzz FUZZ_SEED=$$seed repeats this run)"; \
	LMPARSE_HYPOTHESIS_PROFILE=explore $(PYTHON) -m pytest -q -x --hypothesis-seed="$$seed" \
		tests/test_fuzz_all_parsers.py tests/test_properties.py tests/test_response_template_fuzz.py

# ruff for bugs and style, mypy --strict for the core (lmparse/ outside serve/); config in pyproject.toml.
lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

# The Open Responses compliance suite (its TypeScript runner, from ../shared/conformance/openresponses,
# run by bun from npm; both cached under ~/.cache/lmparse/conformance) against lmparse serve on the
# simulated model. Fails on any failure outside the documented list (docs/responses-api.md); without
# the runner's copy it says SKIPPED and passes.
test-conformance: venv
	$(PYTHON) scripts/openresponses_conformance.py

# Real agent clients (Claude Code, Codex, Qwen Code, opencode, Kilo CLI, Cline CLI, Continue CLI from
# npm; llm and aider from PyPI), pinned with hashes in tests/agents/ and installed once under
# ~/.cache/lmparse/agents (about 2.5 minutes cold), each run against `lmparse serve` with a private HOME.
test-agents: venv testdata
	LMPARSE_AGENTS_BIN="$$(scripts/setup_agents.sh)" $(PYTHON) -m pytest -q tests/agents

# A real llama.cpp llama-server (built once from source into ~/.cache/lmparse/llamacpp, about 6 minutes on
# 2 cores) serving a tiny random-weight GGUF with the real Qwen3 vocabulary, behind lmparse serve. A failed
# build stops here (an empty LMPARSE_LLAMA_SERVER would only skip the tests).
# xgrammar (to compile every dialect's structural tag) needs torch: the CPU build first, asked for by
# its +cpu tag (scripts/install_torch_cpu.sh, docs/engines.md), so pip never fetches the CUDA one.
XGRAMMAR_STAMP := $(VENV)/.xgrammar.stamp
$(XGRAMMAR_STAMP): $(STAMP) scripts/install_torch_cpu.sh
	scripts/install_torch_cpu.sh $(PYTHON)
	$(PYTHON) -m pip install --quiet -e '.[xgrammar]'
	touch $@

test-engines: venv testdata $(XGRAMMAR_STAMP)
	bin="$$(PYTHON=$(PYTHON) scripts/setup_llamacpp.sh)" && LMPARSE_LLAMA_SERVER="$$bin" \
		$(PYTHON) -m pytest -q tests/engines tests/test_constrain_xgrammar.py

# The engine plugins (lmparse.integrations), each tested inside its pinned engine's own venv,
# built once under ~/.cache/lmparse/engines by scripts/setup_<engine>.sh (CPU torch, engine --no-deps).
INTEGRATIONS ?= $(patsubst scripts/setup_%.sh,%,$(filter $(addprefix scripts/setup_,$(addsuffix .sh,vllm sglang lmdeploy)),$(wildcard scripts/setup_*.sh)))
test-integrations: venv testdata
	for engine in $(INTEGRATIONS); do \
		py="$$(scripts/setup_$$engine.sh)" && $$py -m pytest -q -p no:cacheprovider tests/integrations/$$engine || exit 1; \
	done

# Peers (LMDeploy's parsers, no torch) run from their own venv in bench/.peers/, built once.
bench: venv testdata
	test -x bench/.peers/lmdeploy/bin/python || scripts/setup_bench_peers.sh
	$(PYTHON) -m bench --peers --write-docs

# The serving path: CPU per streamed token per API in process, tokens/s at 64 and 256 clients on
# loopback beside a bare Starlette SSE endpoint, and vLLM's / SGLang's own chat serving layers on the
# same token stream (their venvs from scripts/setup_vllm.sh / setup_sglang.sh; a missing one is
# reported as not installed). Writes the serving section of docs/benchmarks.md and its plot.
bench-serving: venv testdata
	$(PYTHON) -m pip install --quiet -e '.[bench]'
	$(PYTHON) -m bench.serving --write-docs

# Every peer's parsers beside lmparse's (python -m bench.compare): LMDeploy from bench/.peers (no torch),
# vLLM and SGLang from their engine venvs (scripts/setup_vllm.sh, setup_sglang.sh: built once, CPU torch;
# they link this checkout's lmparse into those venvs), SMG's Rust reasoning parser built from ../shared/peers
# against Debian's crates (scripts/setup_rust_peer.sh, cached; without the shared copy or cargo it prints
# nothing and the run reports the peer unavailable). Writes docs/benchmarks.md's summary and peers
# sections and docs/img/benchmarks/peers-*.png. BENCH_PEERS_ARGS=--quick for a short run.
BENCH_PEERS_ARGS ?=
bench-peers: venv testdata
	test -x bench/.peers/lmdeploy/bin/python || scripts/setup_bench_peers.sh
	$(PYTHON) -m pip install --quiet -e '.[bench]'
	vllm="$$(scripts/setup_vllm.sh)" && sglang="$$(scripts/setup_sglang.sh)" && smg="$$(scripts/setup_rust_peer.sh)" && \
		LMPARSE_BENCH_VLLM_PYTHON="$$vllm" LMPARSE_BENCH_SGLANG_PYTHON="$$sglang" LMPARSE_BENCH_SMG_DRIVER="$$smg" \
		$(PYTHON) -m bench.compare --write-docs $(BENCH_PEERS_ARGS)
	$(PYTHON) -m bench.serving --write-docs

# lmparse serve under 200 concurrent streams, 2 000 disconnects, hostile requests and upstream faults
# (reliability/); writes docs/reliability.md and fails if anything was lost. `make test` runs a reduced set.
reliability: venv testdata
	$(PYTHON) -m reliability --write docs/reliability.md

# OpenAI + Anthropic server on the simulated model (no weights, nothing downloaded): it prints
# a ready-to-paste curl and Python example. `make serve SERVE_ARGS="--family glm47 --port 9000"`.
SERVE_ARGS ?= --family qwen3
serve: venv
	$(VENV)/bin/lmparse serve $(SERVE_ARGS)

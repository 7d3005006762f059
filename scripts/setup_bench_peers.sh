#!/usr/bin/env bash
# Create the peer virtualenvs that `python -m bench --peers` runs in (bench/.peers/, not in git).
#
# bench/.peers/lmdeploy: LMDeploy's parser package without torch/CUDA. The wheel is
# installed with --no-deps (its declared dependencies include torch, triton and CUDA
# libraries); only the pure-Python packages its parser modules import are added.
# bench/peer_lmdeploy.py bypasses the three engine-importing package modules at run
# time (see its docstring); no installed file is modified. It runs the qwen stack and,
# for every tool dialect of ours that LMDeploy also registers (its --names), the same
# dialect replies; its gpt-oss parser reads token ids only, so it has no text path to compare.
#
# vLLM's hermes parser is not set up: its tool-parser base imports torch at module
# level (vllm.sampling_params -> vllm.utils.torch_utils) and needs an HF tokenizer.
#
# Usage: scripts/setup_bench_peers.sh   (re-running recreates the venv from scratch)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
LMDEPLOY_VERSION="${LMDEPLOY_VERSION:-0.18.0}"
VENV="$ROOT/bench/.peers/lmdeploy"

rm -rf "$VENV"
"$PYTHON" -m venv "$VENV"
"$VENV/bin/pip" install --quiet --no-deps "lmdeploy==$LMDEPLOY_VERSION"
# What lmdeploy/serve/parsers/** and lmdeploy/serve/openai/protocol.py import:
# mmengine (Registry; mmengine-lite is what lmdeploy declares, and it needs packaging),
# pydantic (protocol models), shortuuid (call ids), openai_harmony (gpt-oss parser,
# imported when present; without it the package logs a warning and skips gpt-oss).
# pip then lists lmdeploy's other requirements (torch, transformers, ...) as missing: expected.
"$VENV/bin/pip" install --quiet \
    "mmengine-lite==0.10.7" "packaging==26.4" "pydantic==2.14.4" "shortuuid==1.0.13" "openai_harmony==0.0.8"

cd "$ROOT"
"$VENV/bin/python" -m bench.peer_lmdeploy --check
echo "lmdeploy tool parsers: $("$VENV/bin/python" -m bench.peer_lmdeploy --names)"

"""The vLLM plugin's tests run in the vLLM venv (`$(scripts/setup_vllm.sh) -m pytest -q tests/integrations/vllm`);
anywhere else they are skipped at collection."""

import os

import pytest

os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")  # vLLM's CUDA wheel on a CPU machine, even to build its CLI
pytest.importorskip("vllm")

#!/usr/bin/env bash
# Build the LMDeploy venv that tests/integrations/lmdeploy runs in, once, under
# ~/.cache/lmparse/engines/lmdeploy-<version>; print its python on stdout (the only stdout line).
#
# LMDeploy pins a CUDA torch (<=2.12.1) and CUDA kernels (triton, tilelang, nvidia-*). On a CPU
# machine: the CPU torch 2.13.0+cpu first (install_torch_cpu.sh), then LMDeploy with --no-deps, then the pure-Python
# packages its CLI, serving layer and parsers import, under a constraint keeping torch at
# 2.13.0; torchvision stays out (PyPI's build does not load beside the CPU torch), and so do
# ray, rdkit and the GPU kernels (nothing on the CPU path imports them). Last, lmparse itself
# (editable, no deps) so `python -m lmparse.integrations.lmdeploy` is real in that venv.
# A second run with the same pins only checks the imports.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
version="${LMDEPLOY_VERSION:-0.18.0}"
torch_version="2.13.0"
venv="${LMPARSE_ENGINES_CACHE:-$HOME/.cache/lmparse/engines}/lmdeploy-$version"
py="$venv/bin/python"
# Pure-Python requirements of lmdeploy (its Requires-Dist minus torch, torchvision, triton,
# tilelang, apache-tvm-ffi, flash-linear-attention, nvidia-*, ray, rdkit, opencv).
reqs=(
    cloudpickle einops fastapi fire "mmengine-lite==0.10.7" numpy "openai>=2.45.0"
    "openai_harmony==0.0.8" partial_json_parser pillow protobuf pybase64 "pydantic>2.0.0"
    pyzmq safetensors sentencepiece shortuuid tiktoken uvicorn aiohttp prometheus_client
    "transformers>=4.56.0,!=5.0.*,!=5.1.*,!=5.2.*,!=5.3.*,!=5.4.*,!=5.5.0,!=5.7.*,!=5.8.*,!=5.9.*"
    "accelerate>=0.29.3" "peft<=0.14.0" "xgrammar>=0.2.0,!=0.2.5.post1" packaging httpx pytest
)
# What the venv was last completed for: this checkout and these pins.
key="$root $version $(printf '%s\n' "${reqs[@]}" | sha256sum | cut -c1-16)"
pip=("$venv/bin/pip" install --quiet --disable-pip-version-check)
constraint="$venv/lmparse-constraints.txt"

finish() {  # the pure-Python requirements and lmparse itself, into a venv that has torch and lmdeploy
    echo "torch==$torch_version+cpu" > "$constraint"
    "${pip[@]}" -c "$constraint" "${reqs[@]}" >&2
    "${pip[@]}" --no-deps -e "$root" >&2
    echo "$key" > "$venv/.lmparse-ready"
}

ready() {
    [ -x "$py" ] && "$py" -c "import lmdeploy.cli, lmparse, torch; assert torch.__version__ == '$torch_version+cpu'" 2>/dev/null
}
if ready; then
    # Another checkout or changed pins: top the venv up instead of rebuilding it.
    [ "$(cat "$venv/.lmparse-ready" 2>/dev/null)" = "$key" ] || finish
    echo "$py"
    exit 0
fi
command -v python3 >/dev/null || {
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 python3-venv >&2
}
python3 -m venv --help >/dev/null 2>&1 || {
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >&2
}
rm -rf "$venv"
mkdir -p "$(dirname "$venv")"
python3 -m venv "$venv"
TORCH_VERSION="$torch_version" "$root/scripts/install_torch_cpu.sh" "$py"
"${pip[@]}" --no-deps "lmdeploy==$version" >&2
finish
ready || { echo "setup_lmdeploy: the venv at $venv does not import lmdeploy.cli" >&2; exit 1; }
echo "$py"

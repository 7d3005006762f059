#!/usr/bin/env bash
# Build the SGLang venv `make test-integrations` runs tests/integrations/sglang in, once, under
# ~/.cache/lmparse/engines/sglang-<version>, and print its python's path.
# SGLang pins a CUDA torch; on a CPU machine: the CPU torch 2.13.0+cpu first (install_torch_cpu.sh), SGLang with --no-deps,
# then only the pure-Python packages its plugin loader, function-call and reasoning parsers,
# server_args, launch_server and serving_chat import, under a constraint keeping torch at 2.13.0.
# torchvision stays out: PyPI's build does not load beside the CPU torch (the tests hide it).
# Last, lmparse itself editable, so its `sglang.srt.plugins` entry point is real in that venv.
# A second run only re-installs lmparse when this checkout or its pyproject.toml changed.
set -euo pipefail
version=0.5.23
torch_version=2.13.0
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${LMPARSE_ENGINES_CACHE:-$HOME/.cache/lmparse/engines}/sglang-$version"
py="$dir/bin/python"
stamp="$(printf '%s\n' "$root" | cat - "$root/pyproject.toml" | sha256sum | cut -c1-16)"

if [ ! -x "$py" ] || [ ! -f "$dir/.engine-ok" ]; then
    if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then  # Debian splits venv out
        apt-get update -qq >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >&2
    fi
    rm -rf "$dir"
    python3 -m venv "$dir"
    pip=("$py" -m pip install --quiet --disable-pip-version-check)
    TORCH_VERSION="$torch_version" "$root/scripts/install_torch_cpu.sh" "$py"
    "${pip[@]}" --no-deps "sglang==$version" >&2
    constraint="$dir/constraint.txt"
    printf 'torch==%s+cpu\n' "$torch_version" > "$constraint"
    # Versions as SGLang 0.5.23's Requires-Dist pins them, where it pins them. triton, IPython,
    # dill, gguf, compressed-tensors, jsonschema and xgrammar are imported at module level on
    # the way to serving_chat; xgrammar also builds SGLang's own in-tree structural tags.
    "${pip[@]}" -c "$constraint" \
        aiohttp "anthropic>=0.20.0" fastapi "uvicorn>=0.51" uvloop orjson msgspec pydantic \
        partial_json_parser "openai==2.8.0" "openai-harmony==0.0.4" numpy packaging pillow \
        "prometheus-client>=0.20.0" psutil pybase64 python-multipart "pyzmq>=25.1.2" regex \
        requests tqdm "transformers==5.19.0" "tokenizers==0.23.2" "sentencepiece==0.2.1" tiktoken \
        einops setproctitle interegular "blobfile==3.0.0" "python-dateutil<3" jinja2 \
        "triton==3.9.0" IPython dill gguf "compressed-tensors==0.18.0" jsonschema "xgrammar==0.2.7" \
        pytest >&2
    "$py" -m pip uninstall --quiet -y torchvision >/dev/null 2>&1 || true
    "$py" -c "import torch; assert torch.__version__ == '$torch_version+cpu', torch.__version__" >&2
    touch "$dir/.engine-ok"
fi
if [ "$(cat "$dir/.lmparse-stamp" 2>/dev/null)" != "$stamp" ]; then
    "$py" -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e "$root" >&2 \
        || "$py" -m pip install --quiet --disable-pip-version-check --no-deps -e "$root" >&2
    echo "$stamp" > "$dir/.lmparse-stamp"
fi
echo "$py"

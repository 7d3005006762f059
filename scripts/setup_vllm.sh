#!/usr/bin/env bash
# Build the vLLM venv `tests/integrations/vllm` runs in, once, under
# ~/.cache/lmparse/engines/vllm-<version>, and print its python on stdout.
# vLLM pins a CUDA torch, so on a CPU machine: the CPU torch 2.13.0+cpu first (install_torch_cpu.sh:
# pip's configured sources, else PyTorch's CPU index), then vLLM with --no-deps, then its pure-Python requirements under a constraint that
# keeps torch at 2.13.0 (the CUDA kernel packages and torchvision/torchaudio/torchcodec left out:
# PyPI's torchvision does not load beside the CPU torch), then lmparse itself editable and --no-deps,
# so its `vllm.general_plugins` entry point is real there. A second run only re-links lmparse when
# the worktree or its pyproject.toml (the entry points) changed.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
version=0.33.0
dir="${LMPARSE_ENGINES_CACHE:-$HOME/.cache/lmparse/engines}/vllm-$version"
py="$dir/bin/python"
quiet=(--quiet --disable-pip-version-check)

link_lmparse() {
    "$py" -m pip install "${quiet[@]}" --no-deps --no-build-isolation -e "$root" >&2
    printf '%s %s\n' "$root" "$(sha256sum < "$root/pyproject.toml" | cut -c1-16)" > "$dir/.lmparse-link"
}
if [ -f "$dir/.complete" ]; then
    if [ "$(cat "$dir/.lmparse-link" 2>/dev/null)" != "$root $(sha256sum < "$root/pyproject.toml" | cut -c1-16)" ]; then
        link_lmparse
    fi
    echo "$py"
    exit 0
fi
if ! python3 -c "import venv, ensurepip" 2>/dev/null; then
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >&2
fi
rm -rf "$dir"
mkdir -p "$(dirname "$dir")"
python3 -m venv "$dir"
pins="$dir/torch-pin.txt"
printf 'torch==2.13.0+cpu\n' > "$pins"
"$root/scripts/install_torch_cpu.sh" "$py"
"$py" -m pip install "${quiet[@]}" --no-deps "vllm==$version" >&2
# vLLM's own Requires-Dist, markers evaluated for this interpreter, minus torch's siblings and the
# CUDA-only kernel packages.
"$py" - "$dir/vllm-requirements.txt" <<'EOF'
import re, sys
from importlib.metadata import requires
from pip._vendor.packaging.requirements import Requirement
skip = re.compile(r"^(torch|torchaudio|torchvision|torchcodec|pynvvideocodec|flashinfer-python|apache-tvm-ffi|"
                  r"tilelang|nvidia-.*|nvtx|fastsafetensors|instanttensor|quack-kernels|tokenspeed-mla|"
                  r"humming-kernels)$")
keep = []
for line in requires("vllm") or []:
    req = Requirement(line)
    if req.marker is not None and not req.marker.evaluate({"extra": ""}):
        continue
    if skip.match(req.name.lower().replace("_", "-")):
        continue
    req.marker = None
    keep.append(str(req))
open(sys.argv[1], "w").write("\n".join(keep) + "\n")
EOF
"$py" -m pip install "${quiet[@]}" -c "$pins" -r "$dir/vllm-requirements.txt" pytest setuptools >&2
link_lmparse
VLLM_TARGET_DEVICE=cpu "$py" -c "import vllm.tool_parsers, vllm.reasoning, lmparse" >&2
touch "$dir/.complete"
echo "$py"

#!/usr/bin/env bash
# Install PyTorch's CPU build into the interpreter $1, by its local version tag: `torch==X+cpu`
# matches only the CPU wheel, where a bare `torch==X` resolves to PyPI's CUDA build (several GB of
# nvidia-* wheels) on a machine whose pip finds nothing better.
#
# Where the CPU wheel comes from: pip's own configured sources when they have it (an index or
# --find-links set in pip.conf / PIP_* variables: a local mirror, a wheel directory), else
# PyTorch's CPU index ($LMPARSE_TORCH_INDEX, default https://download.pytorch.org/whl/cpu) added
# beside them. A dry run (--no-deps, nothing downloaded from a local source) decides, so an
# unreachable PyTorch index is never asked when it is not needed. torch's own dependencies come
# from the usual index. Nothing happens when the CPU build of that version is already installed.
# Usage: scripts/install_torch_cpu.sh PYTHON   (TORCH_VERSION overrides the pinned version)
set -euo pipefail
py="$1"
version="${TORCH_VERSION:-2.13.0}"
spec="torch==$version+cpu"
index="${LMPARSE_TORCH_INDEX:-https://download.pytorch.org/whl/cpu}"
quiet=(--quiet --disable-pip-version-check)

if "$py" -c "import sys, torch; sys.exit(torch.__version__ != '$version+cpu')" 2>/dev/null; then
    exit 0
fi
if "$py" -m pip install "${quiet[@]}" --dry-run --no-deps "$spec" >/dev/null 2>&1; then
    echo "install_torch_cpu: $spec from pip's configured sources" >&2
    "$py" -m pip install "${quiet[@]}" "$spec" >&2
else
    echo "install_torch_cpu: $spec from $index" >&2
    "$py" -m pip install "${quiet[@]}" --extra-index-url "$index" "$spec" >&2
fi
"$py" -c "import torch; assert torch.__version__ == '$version+cpu', torch.__version__"

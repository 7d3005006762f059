#!/usr/bin/env bash
# A venv of Python VERSION (3.10, 3.12, ...) for `make test-pythons`, built once under
# ~/.cache/lmparse/pythons/pyVERSION with what the core's suites import (not lmparse itself: the
# tests import the checkout through PYTHONPATH); prints its python on stdout.
# The interpreter: pythonVERSION on PATH when it runs, else one pyenv installed, else Debian's
# package when the release has one. None of these: exit 1, naming the version, because
# pyproject.toml's requires-python and classifiers claim it.
set -euo pipefail
version="$1"
dir="${LMPARSE_PYTHONS_CACHE:-$HOME/.cache/lmparse/pythons}/py$version"
# What the suites import beyond the standard library: the serve extra, the harmony extra, and the
# test tools of the dev extra (pyproject.toml). A change here rebuilds the venv.
packages=(pytest hypothesis tokenizers sentencepiece tiktoken jinja2 openai-harmony starlette uvicorn websockets httpx orjson jiter)
stamp="$(printf '%s\n' "${packages[@]}" | sha256sum | cut -c1-16)"

runs() { [ -n "$1" ] && "$1" -c "import sys, venv; assert '%d.%d' % sys.version_info[:2] == '$version'" 2>/dev/null; }

if [ -x "$dir/bin/python" ] && [ "$(cat "$dir/.stamp" 2>/dev/null)" = "$stamp" ]; then
    echo "$dir/bin/python"
    exit 0
fi
py="$(command -v "python$version" || true)"
if ! runs "$py"; then
    py=""
    for candidate in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$version".*/bin/python"$version"; do
        if runs "$candidate"; then py="$candidate"; fi
    done
fi
if [ -z "$py" ] && apt-cache policy "python$version" 2>/dev/null | grep -q 'Candidate: [0-9]'; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "python$version" "python$version-venv" >&2
    py="$(command -v "python$version")"
fi
if ! runs "$py"; then
    echo "setup_python.sh: no Python $version on this machine (PATH, pyenv, Debian); it is claimed in pyproject.toml" >&2
    exit 1
fi
rm -rf "$dir"
"$py" -m venv "$dir" >&2
"$dir/bin/python" -m pip install --quiet --disable-pip-version-check "${packages[@]}" >&2
echo "$stamp" > "$dir/.stamp"
echo "$dir/bin/python"

#!/bin/sh
# The compiled core, in place: a C extension beside each module lmparse/_core.py lists, built by
# mypyc from the same sources (setup.py with LMPARSE_COMPILE=1), and the group's runtime library
# moved into the package.  Cached under ~/.cache/lmparse/compiled by a hash of what goes into it
# (those sources, _core.py, setup.py, the Python and mypy versions): a hit copies the build back.
# lmparse/_build_info.py records the sources it was built from.  Prints nothing on success;
# LMPARSE_PURE=1 still selects the pure core afterwards.
set -eu
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}

key=$($PYTHON - <<'PY'
import hashlib, platform, runpy, sys
import mypy.version
core = runpy.run_path("lmparse/_core.py")
h = hashlib.sha256(f"{sys.version}|{platform.machine()}|{mypy.version.__version__}".encode())
for path in ["lmparse/_core.py", "setup.py", *(m.replace(".", "/") + ".py" for m in core["COMPILED_MODULES"])]:
    h.update(path.encode() + b"\0" + open(path, "rb").read())
print(h.hexdigest()[:20])
PY
)
cache="${XDG_CACHE_HOME:-$HOME/.cache}/lmparse/compiled/$key"

find lmparse -name '*.so' -delete
rm -f ./*__mypyc*.so lmparse/_build_info.py
if [ -d "$cache/lmparse" ]; then
    cp -R "$cache/lmparse/." lmparse/
else
    LMPARSE_COMPILE=1 $PYTHON setup.py -q build_ext --inplace >/dev/null
    mv ./*__mypyc*.so lmparse/
    rm -rf "$cache.tmp" && mkdir -p "$cache.tmp"
    { find lmparse -name '*.so'; echo lmparse/_build_info.py; } | tar -cf - -T - | tar -xf - -C "$cache.tmp"
    rm -rf "$cache" && mv "$cache.tmp" "$cache"
fi
core=$(LMPARSE_PURE= $PYTHON -c 'import lmparse; print(lmparse.core())')
case "$core" in
    compiled*) ;;
    *) echo "build_compiled.sh: the build does not load: $core" >&2; exit 1 ;;
esac

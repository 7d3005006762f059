#!/usr/bin/env bash
# Install the agent CLIs that `make test-agents` drives (Claude Code, Codex), pinned with their
# integrity hashes in tests/agents/package-lock.json, into ~/.cache/lmparse/agents/<lock hash>.
# Prints the directory holding their executables. A second run with the same lock does nothing.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
lock="$root/tests/agents/package-lock.json"
key="$(sha256sum "$lock" | cut -c1-16)"
dir="${LMPARSE_AGENTS_CACHE:-$HOME/.cache/lmparse/agents}/$key"

if [ -x "$dir/node_modules/.bin/claude" ] && [ -x "$dir/node_modules/.bin/codex" ]; then
    echo "$dir/node_modules/.bin"
    exit 0
fi
if ! command -v npm >/dev/null; then  # a machine without Node.js: Debian's is enough (the CLIs are native)
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >&2
fi
rm -rf "$dir.partial"
mkdir -p "$dir.partial"
cp "$root/tests/agents/package.json" "$lock" "$dir.partial/"
# Claude Code's postinstall copies its native binary (from its platform package) over a placeholder.
(cd "$dir.partial" && npm ci --no-audit --no-fund --loglevel=error >&2)
file_ok() { head -c 4 "$1" | grep -q $'\x7fELF' || [ "$(head -c 2 "$1")" = "#!" ]; }
for bin in claude codex; do
    file_ok "$dir.partial/node_modules/.bin/$bin" || { echo "setup_agents: $bin did not install" >&2; exit 1; }
done
rm -rf "$dir"
mv "$dir.partial" "$dir"
echo "$dir/node_modules/.bin"

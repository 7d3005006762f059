#!/usr/bin/env bash
# Build SMG's Rust reasoning parser with lmparse's benchmark driver; print the driver binary's path.
#
# The crate (smg-project/smg's reasoning_parser, third-party) is never in this repository: it is
# read from the shared peers directory ($LMPARSE_PEERS_DIR, else ../shared/peers beside the
# checkout) and copied to ~/.cache/lmparse/peers/smg-reasoning-parser, where our driver
# (bench/compare/rust/smg_driver.rs) is added as examples/smg_driver.rs and built offline
# against Debian's packaged crates (the crate's .cargo/config.toml points cargo at them).
# A cached binary is reused while neither the driver nor the crate's source changed.
#
# Without the shared directory or cargo it prints nothing and exits 0: the benchmark then
# reports the peer as unavailable.  A failed build exits non-zero.
#
# Usage: bin="$(scripts/setup_rust_peer.sh)"   (progress on stderr; LMPARSE_PEERS_CACHE moves the build)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PEERS="${LMPARSE_PEERS_DIR:-$ROOT/../shared/peers}"
SOURCE="$PEERS/smg-reasoning-parser"
BUILD="${LMPARSE_PEERS_CACHE:-$HOME/.cache/lmparse/peers}/smg-reasoning-parser"
DRIVER="$ROOT/bench/compare/rust/smg_driver.rs"
BINARY="$BUILD/target/release/examples/smg_driver"
# What the crate and its dev-dependencies need (peers/README.md), as Debian packages them, and
# the registry directories they fill (the +feature packages are virtual: dpkg cannot be asked).
CRATES=(librust-regex+default-dev librust-parking-lot-dev librust-thiserror-dev
        librust-tokio+default-dev librust-tokio+sync-dev)
REGISTRY=/usr/share/cargo/registry
NEEDED=(regex parking_lot thiserror tokio tokio-macros)

say() { echo "setup_rust_peer: $*" >&2; }

if [ ! -f "$SOURCE/Cargo.toml" ]; then
    say "no crate at $SOURCE: the smg peer is unavailable"
    exit 0
fi

# The crate's sources unchanged and the driver unchanged: the binary is current.
if [ -x "$BINARY" ] && cmp -s "$DRIVER" "$BUILD/examples/smg_driver.rs" \
        && diff -rq --exclude=target --exclude=examples --exclude=Cargo.lock "$SOURCE" "$BUILD" >/dev/null 2>&1; then
    echo "$BINARY"
    exit 0
fi

export PATH="$PATH:$HOME/.cargo/bin"
missing=()
for crate in "${NEEDED[@]}"; do
    compgen -G "$REGISTRY/$crate-[0-9]*" >/dev/null || { missing=("${CRATES[@]}"); break; }
done
command -v cargo >/dev/null || missing+=(cargo)
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
        say "missing ${missing[*]} and cannot apt-get install them: the smg peer is unavailable"
        exit 0
    fi
    say "installing ${missing[*]}"
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
fi

say "building in $BUILD (about a minute on 2 cores)"
mkdir -p "$BUILD"
# The copy is the crate as shared, made writable; target/ (cargo's cache) is kept.
find "$BUILD" -mindepth 1 -maxdepth 1 ! -name target -exec rm -rf {} +
cp -r "$SOURCE/." "$BUILD/"
chmod -R u+w "$BUILD"
mkdir -p "$BUILD/examples"
cp "$DRIVER" "$BUILD/examples/smg_driver.rs"
(cd "$BUILD" && cargo build --release --offline --quiet --example smg_driver >&2)
echo "$BINARY"

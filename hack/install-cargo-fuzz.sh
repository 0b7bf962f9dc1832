#!/usr/bin/env bash
# cargo-fuzz (the `cargo fuzz` subcommand for libFuzzer targets), built from crates.io.
#
# Usage: hack/install-cargo-fuzz.sh
#   DEST = ${RDF_BULKLOAD_CACHE:-$HOME/.cache/rdf-bulkload}/cargo-fuzz-<version>.
#   Idempotent: a second run builds nothing and only prints the path.
#   Prints `export RDF_BULKLOAD_CARGO_FUZZ=<path of the cargo-fuzz binary>` on stdout
#   (cargo runs it as `cargo fuzz` when its directory is on PATH, or call it directly).
# Needs: cargo (stable is enough to build it; see hack/fuzz.sh for running the targets).
set -euo pipefail
CARGO_FUZZ_VERSION=${CARGO_FUZZ_VERSION:-0.13.2}
CACHE=${RDF_BULKLOAD_CACHE:-$HOME/.cache/rdf-bulkload}
DEST=$CACHE/cargo-fuzz-$CARGO_FUZZ_VERSION
BIN=$DEST/bin/cargo-fuzz

if [ ! -x "$BIN" ] || ! "$BIN" --version 2>/dev/null | grep -qF "$CARGO_FUZZ_VERSION"; then
  echo "building cargo-fuzz $CARGO_FUZZ_VERSION into $DEST" >&2
  # Build in a scratch target dir so a half-built install never looks complete.
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/cargo-fuzz-build.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  nice cargo install cargo-fuzz --locked --version "=$CARGO_FUZZ_VERSION" \
    --root "$DEST" --target-dir "$tmp" --quiet >&2
fi
echo "export RDF_BULKLOAD_CARGO_FUZZ=$BIN"

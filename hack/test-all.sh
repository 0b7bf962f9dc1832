#!/usr/bin/env bash
# `make test`: every suite, with the Go tools built beside the loader's suites.
#
# The loader's suites need only Rust, Jena and Python, and leave one of the two cores mostly idle
# once compiled (pytest, the Jena JVM, downloads). The others need Go tools that take about 40 min
# of compiling on a cold 2-core machine (Kubernetes components, etcd, MinIO, Prometheus, helm, the
# cluster's add-ons, golangci-lint: `make tools-go`). So a second lane runs in the background:
# tools-go at the lowest CPU priority, then the BESIDE suites (the fuzz check: a fixed number of
# inputs, so sharing the CPU changes its time, not its result). The Go suites start once both lanes
# are done. Warm, tools-go only checks stamps. The background lane's log is printed when it ends.
#
# Usage: hack/test-all.sh "LOADER SUITES" "BESIDE SUITES" "GO SUITES"   (make test passes them)
set -euo pipefail
cd "$(dirname "$0")/.."
make=${MAKE:-make}
loader_suites=$1 beside_suites=$2 go_suites=$3
cache=${RDF_BULKLOAD_CACHE:-$HOME/.cache/rdf-bulkload}
mkdir -p "$cache"
log=$(mktemp "$cache/test-beside.XXXXXX.log")
# its own session, so that a failure of the other lane stops all of it (make, go, cargo) at once
# shellcheck disable=SC2016 # expanded by the inner shell
setsid bash -c 'nice -n 19 "$0" --no-print-directory tools-go && "$0" --no-print-directory $1' \
  "$make" "$beside_suites" >"$log" 2>&1 &
beside=$!
trap 'kill -- "-$beside" 2>/dev/null || true; rm -f "$log"' EXIT
echo "test: in the background: make tools-go $beside_suites (log $log)"

# shellcheck disable=SC2086 # word splitting of the target lists is intended
"$make" --no-print-directory $loader_suites

echo "test: waiting for the background lane (make tools-go $beside_suites)"
rc=0; wait "$beside" || rc=$?
sed 's/^/beside: /' "$log"
if [ "$rc" != 0 ]; then
  echo "test: the background lane failed (exit $rc)" >&2
  exit "$rc"
fi
# shellcheck disable=SC2086
"$make" --no-print-directory $go_suites

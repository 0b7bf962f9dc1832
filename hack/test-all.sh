#!/usr/bin/env bash
# `make test`: every suite, in two lanes.
#
# The loader's suites need only Rust, Jena and Python, and leave one of the two cores mostly idle
# once compiled (pytest, the Jena JVM, downloads). The others need Go tools that take about 40 min
# of compiling on a cold 2-core machine (Kubernetes components, etcd, MinIO, Prometheus, helm, the
# cluster's add-ons: `make tools-go`), and the longest of them, the cluster suite,
# mostly waits (the watch trigger's interval, settle periods, pods starting). So a second lane
# runs in the background: tools-go at the lowest CPU priority, then the BESIDE suites (the cluster
# suite and the fuzz check: neither is timed, so sharing the CPU changes their time, not their
# result). The foreground runs the LOADER suites, then the GO suites once tools-go is done, then
# waits for the background lane. Warm, tools-go only checks stamps. The background lane's log is
# printed when it ends.
#
# Usage: hack/test-all.sh "LOADER SUITES" "BESIDE SUITES" "GO SUITES"   (make test passes them)
set -euo pipefail
cd "$(dirname "$0")/.."
make=${MAKE:-make}
loader_suites=$1 beside_suites=$2 go_suites=$3
cache=${RDF_BULKLOAD_CACHE:-$HOME/.cache/rdf-bulkload}
mkdir -p "$cache"
log=$(mktemp "$cache/test-beside.XXXXXX.log")
tools_done=$log.tools-done
# its own session, so that a failure of the other lane stops all of it (make, go, cargo) at once;
# the cluster suite's script takes its cluster down on that SIGTERM, which the trap waits for
# shellcheck disable=SC2016 # expanded by the inner shell
setsid bash -c 'nice -n 19 "$0" --no-print-directory tools-go && touch "$2" && "$0" --no-print-directory $1' \
  "$make" "$beside_suites" "$tools_done" >"$log" 2>&1 &
beside=$!
trap 'kill -- "-$beside" 2>/dev/null && wait "$beside" 2>/dev/null; rm -f "$log" "$tools_done"' EXIT
echo "test: in the background: make tools-go, then $beside_suites (log $log)"

finish_background() {
  local rc=0
  wait "$beside" || rc=$?
  sed 's/^/beside: /' "$log"
  if [ "$rc" != 0 ]; then
    # the lane's log is long and CI may keep only its tail: name what failed last
    echo "test: what failed in the background lane:" >&2
    grep -E -e '--- FAIL:|^FAIL|FAILED|Error [0-9]+$' "$log" | sed 's/^/test:   /' >&2 || true
    echo "test: the background lane failed (exit $rc)" >&2
    exit "$rc"
  fi
}

# shellcheck disable=SC2086 # word splitting of the target lists is intended
"$make" --no-print-directory $loader_suites

echo "test: waiting for make tools-go in the background lane"
while [ ! -e "$tools_done" ]; do
  kill -0 "$beside" 2>/dev/null || { finish_background; echo "test: tools-go did not finish" >&2; exit 1; }
  sleep 5
done
# shellcheck disable=SC2086
"$make" --no-print-directory $go_suites

echo "test: waiting for the background lane ($beside_suites)"
finish_background

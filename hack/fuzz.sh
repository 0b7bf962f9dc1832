#!/usr/bin/env bash
# Builds and runs the loader's fuzz targets (loader-image/fuzz/, cargo fuzz + libFuzzer).
#
# Usage:
#   hack/fuzz.sh build                 build every target
#   hack/fuzz.sh check [TARGET...]     every target (default: all) runs a fixed, seeded number of inputs,
#                                      starting from its committed seeds only (what
#                                      `make test-fuzz` and CI run: the same work each time)
#   hack/fuzz.sh run SECONDS [TARGET...]
#                                      fuzz each target (default: all) for SECONDS, growing
#                                      its working corpus in loader-image/fuzz/corpus/
# A failing input is saved under loader-image/fuzz/artifacts/<target>/; replay it with
#   hack/fuzz.sh replay TARGET FILE
#
# cargo-fuzz needs nightly-only compiler flags: a nightly toolchain is used when rustup
# has one, otherwise the stable one with RUSTC_BOOTSTRAP=1 (both work with rustc 1.95).
# FUZZ_SANITIZER (default: address) is passed as cargo fuzz's --sanitizer.
set -euo pipefail
CALLER_DIR=$PWD
SCRIPT=$(realpath "$0")
cd "$(dirname "$0")/.."
FUZZ_DIR=loader-image/fuzz
SANITIZER=${FUZZ_SANITIZER:-address}
# Inputs per target for `check` (a regression check from the seeds; `make fuzz` explores):
# about 15-35 s each on 2 cores.
declare -A CHECK_RUNS=([input_lines]=8000 [input_terse]=12000 [input_terse_recovery]=2500 [input_terse_split]=3000 [input_terse_fast]=3000 [input_decompress]=15000 [bptree_build]=1500)
TARGETS=(input_lines input_terse input_terse_recovery input_terse_split input_terse_fast input_decompress bptree_build)

eval "$(bash hack/install-cargo-fuzz.sh)"
PATH="$(dirname "$RDF_BULKLOAD_CARGO_FUZZ"):$PATH"; export PATH
if command -v rustup >/dev/null 2>&1 && rustup toolchain list | grep -q '^nightly'; then
  CARGO=(cargo +nightly)
else
  CARGO=(cargo)
  export RUSTC_BOOTSTRAP=1
fi
FUZZ=(nice "${CARGO[@]}" fuzz)
# Scratch space, removed on exit: the targets write their files under TMPDIR.
scratch=$(mktemp -d "${TMPDIR:-/tmp}/rdf-bulkload-fuzz.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/tmp"
export TMPDIR=$scratch/tmp
BUILD_OPTS=(--sanitizer "$SANITIZER" --target-dir target)
cd "$FUZZ_DIR"

libfuzzer() { # libfuzzer TARGET CORPUS_DIR... -- LIBFUZZER_OPTIONS...
  local t=$1; shift
  mkdir -p "artifacts/$t"
  # -timeout: an input running longer than 10 s is a hang, reported as a failure.
  "${FUZZ[@]}" run "${BUILD_OPTS[@]}" "$t" "$@" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="artifacts/$t/" -print_final_stats=1
}

case ${1:-} in
  build)
    "${FUZZ[@]}" build "${BUILD_OPTS[@]}"
    ;;
  check)
    shift
    [ $# -gt 0 ] || set -- "${TARGETS[@]}"
    for t in "$@"; do
      echo "== $t: ${CHECK_RUNS[$t]} inputs from seeds/$t" >&2
      mkdir -p "$scratch/$t"
      status=0
      libfuzzer "$t" "$scratch/$t" "seeds/$t" -- -runs="${CHECK_RUNS[$t]}" -seed=1 >"$scratch/$t.log" 2>&1 || status=$?
      if [ "$status" -ne 0 ]; then
        tail -n 80 "$scratch/$t.log" >&2
        echo "fuzz target $t failed (the input is saved under $FUZZ_DIR/artifacts/$t/)" >&2
        exit 1
      fi
      grep -E '^(#[0-9]+ +DONE|Done [0-9]+ runs)' "$scratch/$t.log" >&2 || true
    done
    echo "fuzz: $# passed, 0 failed"
    ;;
  run)
    seconds=${2:?usage: hack/fuzz.sh run SECONDS [TARGET...]}
    shift 2
    [ $# -gt 0 ] || set -- "${TARGETS[@]}"
    for t in "$@"; do
      echo "== $t: $seconds s" >&2
      mkdir -p "corpus/$t"
      libfuzzer "$t" "corpus/$t" "seeds/$t" -- -max_total_time="$seconds"
    done
    ;;
  replay)
    t=${2:?usage: hack/fuzz.sh replay TARGET FILE}; f=$(cd "$CALLER_DIR" && realpath "${3:?usage: hack/fuzz.sh replay TARGET FILE}")
    "${FUZZ[@]}" run "${BUILD_OPTS[@]}" "$t" "$f"
    ;;
  *)
    sed -n '/^# Usage/,/^# FUZZ_SANITIZER/p' "$SCRIPT" >&2; exit 2
    ;;
esac

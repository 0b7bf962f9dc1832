#!/usr/bin/env bash
# Python venv for the loader test harness (pytest, requests, rdflib), from PyPI only.
#
# Usage: hack/setup-python.sh
#   The venv lives at ${RDF_BULKLOAD_CACHE:-$HOME/.cache/rdf-bulkload}/pyvenv-<python>-<digest>,
#   where <digest> is the SHA-256 prefix of loader-image/tests/requirements.txt, so changing a
#   pin makes a new venv and a second run with the same pins does nothing.
#   Prints `export RDF_BULKLOAD_PYTHON=<venv>/bin/python` on stdout.
# Needs: python3 (3.9+) with the venv module (Debian: python3-venv).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
REQ=$ROOT/loader-image/tests/requirements.txt
CACHE=${RDF_BULKLOAD_CACHE:-$HOME/.cache/rdf-bulkload}
PY=${PYTHON:-python3}
pyver=$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
digest=$(sha256sum "$REQ" | cut -c1-12)
VENV=$CACHE/pyvenv-$pyver-$digest
if [ ! -x "$VENV/bin/python" ] || [ ! -f "$VENV/.complete" ]; then
  echo "creating $VENV" >&2
  mkdir -p "$CACHE"
  rm -rf "$VENV"          # a venv without .complete is a half-finished one
  "$PY" -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-input \
      --require-virtualenv -r "$REQ" >&2
  touch "$VENV/.complete"
fi
echo "export RDF_BULKLOAD_PYTHON=$VENV/bin/python"

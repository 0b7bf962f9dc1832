#!/usr/bin/env bash
# The main job, end to end on the sample dump the repository ships (examples/):
# load examples/*.gz with rdf-bulkload into out/demo-db (a Jena TDB2 database), then answer
# a SPARQL query over it with unmodified Apache Jena 5.6.0 (tdb2.tdbquery).
#
# Usage: hack/demo.sh [QUERY.rq]      (run by `make demo`, which builds the loader and Jena first)
#   QUERY defaults to examples/queries/top-rated-products.rq. Env: RDF_BULKLOAD (loader binary).
set -euo pipefail
cd "$(dirname "$0")/.."
QUERY=${1:-examples/queries/top-rated-products.rq}
BIN=${RDF_BULKLOAD:-loader-image/target/release/rdf-bulkload}
DB=out/demo-db
[ -x "$BIN" ] || { echo "no loader binary at $BIN: run 'make loader' (or 'make demo')" >&2; exit 1; }
eval "$(bash hack/install-jena.sh)"

mkdir -p out
rm -rf "$DB" "$DB.rejects.jsonl"      # our own output from an earlier run
echo "== loading examples/ into $DB"
"$BIN" load --loc "$DB" examples/catalog.ttl.gz examples/catalog-graphs.nq.gz
python3 - "$DB/bulkload-report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print('   %s triples, %s quads, %s distinct terms, %s rejects, %.1f s' % (
    r.get('triples'), r.get('quads'), r.get('distinct_terms'), r.get('rejects'), r.get('duration_seconds', 0)))
PY
echo "== $QUERY (Jena tdb2.tdbquery)"
grep '^#' "$QUERY" | sed 's/^# */   /'
"$JENA_HOME/bin/tdb2.tdbquery" --loc "$DB" --query "$QUERY"

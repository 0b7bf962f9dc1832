#!/usr/bin/env bash
# The chart's alerts and dashboard (make test-alerts):
#  1. the PrometheusRule as `helm template` renders it with the defaults: `promtool check rules` and
#     `promtool test rules` (charts/rdf-bulkload/tests/alerts/alerts_test.yaml), and every alert of
#     the rules has a test where it fires and one where it does not;
#  2. every PromQL expression of the rules and of the rendered dashboard parses (Prometheus' parser,
#     hack/promql-names), which prints the metric names they use;
#  3. each of those names is served by a real scrape: the operator's registry after an envtest build
#     (TestStatusMetricsFollowTheBuild), the fetch CLI during a fetch from MinIO
#     (TestCLIMetricsEndpoint), the release loader during a load (tests/alerts/scrape_loader.py).
# Usage: hack/test-alerts.sh [--no-scrape | --names | --render DIR]
#   --no-scrape: steps 1 and 2 only (no envtest, MinIO or loader);
#   --names: only render and parse, and print the metric names used, one per line, on stdout
#            (for checking them against another Prometheus, e.g. the local cluster's);
#   --render DIR: only render and parse, and write DIR/rules.yaml (a Prometheus rule file: the
#            PrometheusRule's spec), DIR/dashboard.json and DIR/names.txt, for a plain Prometheus.
# Env: LOADER (default loader-image/target/release/rdf-bulkload), HELM, KUBEBUILDER_ASSETS,
#      OPERATOR_TEST_CRDS (else installed like make test-operator does).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
CHART=charts/rdf-bulkload
SCRAPE=1 NAMES='' RENDER=''
case "${1:-}" in
  --no-scrape) SCRAPE= ;;
  --names) SCRAPE='' NAMES=1 ;;
  --render) SCRAPE='' NAMES=1 RENDER=${2:?--render DIR}; mkdir -p "$RENDER" ;;
  "") ;;
  *) echo "usage: $0 [--no-scrape | --names | --render DIR]" >&2; exit 2 ;;
esac
export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false
[ -n "$NAMES" ] || eval "$(bash hack/install-prometheus.sh)"
HELM=${HELM:-$(bash hack/install-helm.sh)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
log() { echo "test-alerts: $*" >&2; }

# ---- 1. rules: render, check, unit tests
"$HELM" template rdf-bulkload "$CHART" --namespace rdf-bulkload-system --kube-version 1.37.0 \
  --set monitoring.prometheusRule.enabled=true --set monitoring.dashboard.enabled=true \
  --show-only templates/monitoring.yaml > "$work/monitoring.yaml"
python3 - "$work" "$CHART/tests/alerts/alerts_test.yaml" <<'PY'
import json, sys, yaml
work, tests = sys.argv[1], sys.argv[2]
docs = [d for d in yaml.safe_load_all(open(work + '/monitoring.yaml')) if d]
rule = [d for d in docs if d['kind'] == 'PrometheusRule']
cm = [d for d in docs if d['kind'] == 'ConfigMap']
assert len(rule) == 1 and len(cm) == 1, [d['kind'] for d in docs]
yaml.safe_dump(rule[0]['spec'], open(work + '/rules.yaml', 'w'), sort_keys=False)
json.loads(cm[0]['data']['rdf-bulkload.json'])
open(work + '/dashboard.json', 'w').write(cm[0]['data']['rdf-bulkload.json'])
# every alert is tested both ways
alerts = [r['alert'] for g in rule[0]['spec']['groups'] for r in g['rules'] if 'alert' in r]
fires, quiet = set(), set()
for t in yaml.safe_load(open(tests))['tests']:
    for a in t.get('alert_rule_test', []):
        (fires if a.get('exp_alerts') else quiet).add(a['alertname'])
missing = ['%s (%s)' % (a, how) for a in alerts for how, s in (('firing', fires), ('not firing', quiet)) if a not in s]
if missing:
    sys.exit('alerts without a promtool test: ' + ', '.join(missing))
print('test-alerts: %d alerts, each tested firing and not firing' % len(alerts), file=sys.stderr)
PY
if [ -z "$NAMES" ]; then
  "$PROMTOOL" check rules "$work/rules.yaml"
  cp "$CHART/tests/alerts/alerts_test.yaml" "$work/"
  (cd "$work" && "$PROMTOOL" test rules alerts_test.yaml)
fi

# ---- 2. every expression parses; the names they use
(cd hack/promql-names && nice go build -o "$work/promql-names" .)
"$work/promql-names" --rules "$work/rules.yaml" --dashboard "$work/dashboard.json" > "$work/names.txt"
log "$(wc -l < "$work/names.txt") metric names in the rules and the dashboard"
if [ -n "$RENDER" ]; then
  cp "$work/rules.yaml" "$work/dashboard.json" "$work/names.txt" "$RENDER/"
elif [ -n "$NAMES" ]; then
  cat "$work/names.txt"
fi
[ -n "$SCRAPE" ] || exit 0

# ---- 3. the names against real scrapes
mkdir -p "$work/scrapes"
LOADER=${LOADER:-$ROOT/loader-image/target/release/rdf-bulkload}
[ -x "$LOADER" ] || { log "no loader binary at $LOADER (make loader)"; exit 1; }
python3 "$CHART/tests/alerts/scrape_loader.py" "$LOADER" "$work/scrapes/loader.prom"
eval "$(bash hack/install-minio.sh)"
: "${KUBEBUILDER_ASSETS:=$(bash hack/install-kube.sh)}" "${OPERATOR_TEST_CRDS:=$(bash hack/fetch-test-crds.sh)}"
export KUBEBUILDER_ASSETS OPERATOR_TEST_CRDS RDF_BULKLOAD_SCRAPE_DIR=$work/scrapes
(cd operator && nice go test -count=1 -run '^TestCLIMetricsEndpoint$' ./cmd/fetch &&
  nice go test -count=1 -run '^TestStatusMetricsFollowTheBuild$' ./internal/controller)
for f in operator fetch loader; do
  [ -s "$work/scrapes/$f.prom" ] || { log "the $f scrape was not written"; exit 1; }
done
"$work/promql-names" --rules "$work/rules.yaml" --dashboard "$work/dashboard.json" \
  --scrape "$work/scrapes/operator.prom" --scrape "$work/scrapes/fetch.prom" --scrape "$work/scrapes/loader.prom" >/dev/null
log "every name is served by the operator, the fetch step or the loader"

#!/usr/bin/env python3
"""Tests of the Helm chart: helm lint, `helm template` snapshot tests and assertions on the
rendered objects (what a cluster would get), and values.schema.json rejecting bad values.

Usage: HELM=/path/to/helm python3 charts/rdf-bulkload/tests/test_chart.py [--update]
  --update (or UPDATE_SNAPSHOTS=1) rewrites tests/snapshots/<case>.yaml from the current chart.
Ends with 'chart: N passed, M failed'. Needs PyYAML (Debian python3-yaml).
"""
import difflib
import glob
import os
import subprocess
import sys
import traceback

import yaml

CHART = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))
ROOT = os.path.abspath(os.path.join(CHART, '..', '..'))
HELM = os.environ.get('HELM', 'helm')
NS = 'rdf-bulkload-system'
KUBE_VERSION = '1.37.0'   # helm built from source defaults to v1.20; Chart.yaml needs >= 1.27
UPDATE = '--update' in sys.argv or os.environ.get('UPDATE_SNAPSHOTS') == '1'


def helm(*args, check=True):
    r = subprocess.run([HELM] + list(args), capture_output=True, text=True, timeout=300)
    if check and r.returncode != 0:
        raise AssertionError('helm %s failed (%d):\n%s%s' % (' '.join(args), r.returncode, r.stdout, r.stderr))
    return r


def render(case=None, *sets, crds=True):
    args = ['template', 'rdf-bulkload', CHART, '--namespace', NS, '--kube-version', KUBE_VERSION]
    if case:
        args += ['-f', case]
    for s in sets:
        args += ['--set', s]
    if not crds:
        args += ['--set', 'crds.install=false']
    return helm(*args).stdout


def objects(text):
    return [d for d in yaml.safe_load_all(text) if d]


def find(objs, kind, name=None):
    got = [o for o in objs if o['kind'] == kind and (name is None or o['metadata']['name'] == name)]
    assert got, 'no %s %s rendered' % (kind, name or '')
    return got


def case_path(name):
    return os.path.join(CHART, 'tests', 'cases', name + '.yaml')


# ------------------------------------------------------------------------------ tests
def test_lint():
    helm('lint', '--strict', CHART)
    for case in sorted(glob.glob(os.path.join(CHART, 'tests', 'cases', '*.yaml'))):
        helm('lint', '--strict', CHART, '-f', case)


def test_snapshots():
    stale = []
    for case in sorted(glob.glob(os.path.join(CHART, 'tests', 'cases', '*.yaml'))):
        name = os.path.basename(case)[:-5]
        snap = os.path.join(CHART, 'tests', 'snapshots', name + '.yaml')
        got = render(case, crds=False)   # the CRD is config/'s generated file, checked by test_crd_matches_config
        if UPDATE:
            with open(snap, 'w') as f:
                f.write(got)
            continue
        want = open(snap).read() if os.path.exists(snap) else ''
        if got != want:
            diff = ''.join(difflib.unified_diff(want.splitlines(True), got.splitlines(True), snap, 'rendered', n=2))
            stale.append(diff[:4000])
    assert not stale, ('rendered chart differs from the snapshots (review, then run `make chart-snapshots`):\n'
                       + '\n'.join(stale))


def test_crd_matches_config():
    """The chart ships the CRD (and the manager's rules) generated under config/ (make chart-sync)."""
    for src, dst in [(os.path.join(ROOT, 'config/crd/bases/rdf.bulkload.io_bulkloads.yaml'),
                      os.path.join(CHART, 'files/crd-bulkloads.yaml')),
                     (os.path.join(ROOT, 'config/rbac/role.yaml'), os.path.join(CHART, 'files/manager-role.yaml'))]:
        assert open(src).read() == open(dst).read(), '%s is stale: run `make chart-sync`' % os.path.relpath(dst, ROOT)
    objs = objects(render())
    crd = find(objs, 'CustomResourceDefinition', 'bulkloads.rdf.bulkload.io')[0]
    assert [v['name'] for v in crd['spec']['versions']] == ['v1alpha1']
    role = find(objs, 'ClusterRole', 'rdf-bulkload-manager')[0]
    want = yaml.safe_load(open(os.path.join(ROOT, 'config/rbac/role.yaml')))['rules']
    assert role['rules'] == want, 'the manager ClusterRole differs from config/rbac/role.yaml'


def test_crd_is_a_template_kept_on_uninstall():
    """The CRD is rendered with the release (so `helm upgrade` upgrades it), as generated, kept on
    uninstall; crds.install=false leaves it out (for a second release, or CRDs applied otherwise)."""
    crd = find(objects(render()), 'CustomResourceDefinition', 'bulkloads.rdf.bulkload.io')[0]
    assert crd['metadata']['annotations']['helm.sh/resource-policy'] == 'keep', crd['metadata']
    generated = yaml.safe_load(open(os.path.join(ROOT, 'config/crd/bases/rdf.bulkload.io_bulkloads.yaml')))
    assert crd['spec'] == generated['spec'], 'the rendered CRD differs from the generated one'
    assert not [o for o in objects(render(None, 'crds.install=false')) if o['kind'] == 'CustomResourceDefinition']
    assert not os.path.exists(os.path.join(CHART, 'crds')), 'crds/ would be installed besides the template'


def test_manager_deployment():
    objs = objects(render())
    dep = find(objs, 'Deployment', 'rdf-bulkload-controller-manager')[0]
    pod = dep['spec']['template']['spec']
    c = pod['containers'][0]
    assert c['image'] == 'ghcr.io/rdf-bulkload/rdf-bulkload-operator:0.1.0', c['image']
    assert c['command'] == ['/manager']
    # flags operator/cmd/manager/main.go defines
    main_go = open(os.path.join(ROOT, 'operator/cmd/manager/main.go')).read()
    for a in c['args']:
        flag = a.split('=')[0].lstrip('-')
        assert '"%s"' % flag in main_go, 'the manager has no flag %s' % flag
    assert '--leader-elect' in c['args'] and '--metrics-bind-address=:8443' in c['args']
    assert '--metrics-secure=true' in c['args'] and not [a for a in c['args'] if a.startswith('--metrics-cert-path')]
    assert '--health-probe-bind-address=:8081' in c['args']
    ports = {p['name']: p['containerPort'] for p in c['ports']}
    assert ports == {'metrics': 8443, 'probes': 8081}, ports
    assert c['livenessProbe']['httpGet'] == {'path': '/healthz', 'port': 'probes'}
    assert c['readinessProbe']['httpGet'] == {'path': '/readyz', 'port': 'probes'}
    env = {e['name']: e['value'] for e in c['env']}
    assert env['RDF_BULKLOAD_FETCH_IMAGE'] == c['image']
    assert env['RDF_BULKLOAD_LOADER_IMAGE'] == 'ghcr.io/rdf-bulkload/rdf-bulkload-loader:0.1.0'
    assert 'RDF_BULKLOAD_STEP_IMAGE_PULL_POLICY' not in env   # Kubernetes' default unless set
    # the env variables the manager reads
    for name in env:
        assert name in main_go, 'the manager does not read %s' % name
    c = find(objects(render(None, 'loaderImage.pullPolicy=Never')), 'Deployment')[0]['spec']['template']['spec']['containers'][0]
    assert {'name': 'RDF_BULKLOAD_STEP_IMAGE_PULL_POLICY', 'value': 'Never'} in c['env'], c['env']
    # the Argo controller's instance ID only when set (an unlabelled Workflow is what a controller without one runs)
    assert 'RDF_BULKLOAD_ARGO_INSTANCE_ID' not in env and env['RDF_BULKLOAD_WORKFLOW_START_TIMEOUT'] == '2m'
    c = find(objects(render(None, 'argo.instanceID=rdf-builds')), 'Deployment')[0]['spec']['template']['spec']['containers'][0]
    assert {'name': 'RDF_BULKLOAD_ARGO_INSTANCE_ID', 'value': 'rdf-builds'} in c['env'], c['env']
    # the Workflows' own artifact repository only when enabled: its ConfigMap in each BulkLoad
    # namespace, the manager told which one
    assert 'RDF_BULKLOAD_ARGO_ARTIFACT_REPOSITORY' not in env
    objs = objects(render(None, 'argo.artifactRepository.enabled=true', 'argo.workflowServiceAccount.namespaces={a,b}'))
    c = find(objs, 'Deployment')[0]['spec']['template']['spec']['containers'][0]
    assert {'name': 'RDF_BULKLOAD_ARGO_ARTIFACT_REPOSITORY', 'value': 'rdf-bulkload-artifact-repository/repository'} in c['env']
    repos = [o for o in objs if o['kind'] == 'ConfigMap' and o['metadata']['name'] == 'rdf-bulkload-artifact-repository']
    assert sorted(o['metadata']['namespace'] for o in repos) == ['a', 'b'], repos
    assert all(yaml.safe_load(o['data']['repository']) == {'archiveLogs': False} for o in repos), repos
    objs = objects(render(None, 'argo.artifactRepository.enabled=true', 'argo.artifactRepository.create=false'))
    assert not [o for o in objs if o['kind'] == 'ConfigMap' and o['metadata']['name'] == 'rdf-bulkload-artifact-repository']
    # restricted Pod Security Standard
    assert pod['securityContext']['runAsNonRoot'] is True and pod['securityContext']['runAsUser'] != 0
    assert pod['securityContext']['seccompProfile']['type'] == 'RuntimeDefault'
    sc = c['securityContext']
    assert sc['readOnlyRootFilesystem'] is True and sc['allowPrivilegeEscalation'] is False
    assert sc['capabilities']['drop'] == ['ALL']
    assert c['resources']['limits']['memory'] and c['resources']['requests']['cpu']
    sa = find(objs, 'ServiceAccount', 'rdf-bulkload-controller-manager')[0]['metadata']['name']
    assert pod['serviceAccountName'] == sa
    for kind in ('ClusterRoleBinding', 'RoleBinding'):
        for b in find(objs, kind):
            if b['metadata']['name'] in ('rdf-bulkload-workflow', 'rdf-bulkload-metrics-reader'):
                continue   # the build pods' and the scraper's bindings, see test_workflow_service_account and test_metrics_endpoint_rbac
            assert b['subjects'] == [{'kind': 'ServiceAccount', 'name': sa, 'namespace': NS}], b
    svc = find(objs, 'Service', 'rdf-bulkload-metrics')[0]
    sel = svc['spec']['selector']
    assert all(dep['spec']['template']['metadata']['labels'].get(k) == v for k, v in sel.items())
    assert svc['spec']['ports'][0]['targetPort'] == 'metrics' and svc['spec']['ports'][0]['port'] == 8443
    lease = find(objs, 'Role', 'rdf-bulkload-leader-election')[0]
    assert any('leases' in r['resources'] for r in lease['rules'])
    # leader election records its transitions as core/v1 Events (seen refused on a real cluster)
    assert any('' in r['apiGroups'] and 'events' in r['resources'] and 'create' in r['verbs']
               for r in lease['rules']), lease['rules']
    assert not [o for o in objs if o['kind'] in ('ServiceMonitor', 'Secret') or 'fuseki' in o['metadata']['name']]


def test_metrics_endpoint_rbac():
    """The metrics endpoint is HTTPS behind controller-runtime's authentication and authorization
    filter: the manager may create TokenReviews and SubjectAccessReviews, and a scraper needs the
    metrics-reader ClusterRole (config/rbac/metrics_reader_role.yaml), bound to nobody unless
    metrics.reader.subjects names someone."""
    objs = objects(render())
    manager = find(objs, 'ClusterRole', 'rdf-bulkload-manager')[0]['rules']
    for group, resource in (('authentication.k8s.io', 'tokenreviews'), ('authorization.k8s.io', 'subjectaccessreviews')):
        assert any(group in r['apiGroups'] and resource in r['resources'] and 'create' in r['verbs'] for r in manager), \
            'the manager may not create %s.%s' % (resource, group)
    reader = find(objs, 'ClusterRole', 'rdf-bulkload-metrics-reader')[0]
    want = yaml.safe_load(open(os.path.join(ROOT, 'config/rbac/metrics_reader_role.yaml')))['rules']
    assert reader['rules'] == want == [{'nonResourceURLs': ['/metrics'], 'verbs': ['get']}], reader['rules']
    assert not [o for o in objs if o['kind'] == 'ClusterRoleBinding' and 'metrics-reader' in o['metadata']['name']]
    subject = {'kind': 'ServiceAccount', 'name': 'prometheus', 'namespace': 'monitoring'}
    objs = objects(render(None, 'metrics.reader.subjects[0].kind=ServiceAccount', 'metrics.reader.subjects[0].name=prometheus',
                          'metrics.reader.subjects[0].namespace=monitoring'))
    b = find(objs, 'ClusterRoleBinding', 'rdf-bulkload-metrics-reader')[0]
    assert b['roleRef'] == {'apiGroup': 'rbac.authorization.k8s.io', 'kind': 'ClusterRole', 'name': 'rdf-bulkload-metrics-reader'}
    assert b['subjects'] == [subject], b['subjects']
    # the default ServiceMonitor scrapes over HTTPS with the Prometheus pod's token, not verifying the
    # self-signed certificate, and keeps the metrics' own namespace label (the BulkLoad's, which the
    # alerts name) instead of renaming it exported_namespace
    ep = find(objects(render(None, 'metrics.serviceMonitor.enabled=true')), 'ServiceMonitor')[0]['spec']['endpoints'][0]
    assert ep == {'port': 'metrics', 'path': '/metrics', 'scheme': 'https', 'interval': '30s', 'scrapeTimeout': '10s',
                  'honorLabels': True,
                  'bearerTokenFile': '/var/run/secrets/kubernetes.io/serviceaccount/token',
                  'tlsConfig': {'insecureSkipVerify': True}}, ep
    ep = find(objects(render(None, 'metrics.serviceMonitor.enabled=true', 'metrics.serviceMonitor.tokenSecret=prometheus-token')),
              'ServiceMonitor')[0]['spec']['endpoints'][0]
    assert ep['authorization'] == {'type': 'Bearer', 'credentials': {'name': 'prometheus-token', 'key': 'token'}}, ep
    assert 'bearerTokenFile' not in ep and ep['scheme'] == 'https'
    # metrics.secure=false: plain HTTP, no token, no reader role
    objs = objects(render(None, 'metrics.secure=false', 'metrics.port=8080', 'metrics.service.port=8080',
                          'metrics.serviceMonitor.enabled=true'))
    c = find(objs, 'Deployment')[0]['spec']['template']['spec']['containers'][0]
    assert '--metrics-secure=false' in c['args'] and '--metrics-bind-address=:8080' in c['args'], c['args']
    ep = find(objs, 'ServiceMonitor')[0]['spec']['endpoints'][0]
    assert ep['scheme'] == 'http' and not {'bearerTokenFile', 'authorization', 'tlsConfig'} & set(ep), ep
    assert not [o for o in objs if 'metrics-reader' in o['metadata']['name']]


def test_fuseki_starts_before_the_first_handoff():
    """Before a BulkLoad hands a database off, the databases volume is the chart's emptyDir: the
    directory Fuseki's --loc names must exist in it (else Fuseki exits and `helm install --wait`
    never completes, as seen on a real cluster), and after the handoff it must be the database
    directory of the restored volume (the build writes it as db/ at the volume's root)."""
    objs = objects(render(None, 'fuseki.enabled=true'))
    pod = find(objs, 'Deployment', 'rdf-bulkload-fuseki')[0]['spec']['template']['spec']
    c = pod['containers'][0]
    loc = c['args'][c['args'].index('--loc') + 1]
    mount = [m for m in c['volumeMounts'] if m['name'] == 'databases'][0]
    assert mount['mountPath'] == loc and mount.get('subPath') == 'db', (loc, mount)
    spec_go = open(os.path.join(ROOT, 'operator/internal/specs/workflow.go')).read()
    assert 'DatabasePath     = "/data/db"' in spec_go, \
        'the build no longer writes the database as db/ at the volume root'


def test_fuseki_keeps_serving_through_a_handoff():
    """Each handoff mounts a newly restored volume, so the new pod never opens the database the
    old one holds: the Deployment surges one pod and stops the old one only once the new one is
    ready (no gap, unlike Recreate), and ready means the dataset answers a SPARQL query, not just
    that the server is up. One replica at most: one process opens a TDB2 database."""
    objs = objects(render(None, 'fuseki.enabled=true', 'fuseki.dataset=wd'))
    dep = find(objs, 'Deployment', 'rdf-bulkload-fuseki')[0]
    assert dep['spec']['strategy'] == {'type': 'RollingUpdate', 'rollingUpdate': {'maxSurge': 1, 'maxUnavailable': 0}}, \
        dep['spec']['strategy']
    c = dep['spec']['template']['spec']['containers'][0]
    startup = c['startupProbe']['httpGet']
    assert startup['path'] == '/wd/query?query=ASK%7B%7D' and startup['port'] == 'http', startup
    assert c['readinessProbe']['exec']['command'][:2] == ['sh', '-c'], c['readinessProbe']
    assert c['args'][-1] == '/wd', 'the probe queries the dataset Fuseki serves'
    assert c['livenessProbe']['httpGet']['path'] == '/$/ping' and c['livenessProbe']['timeoutSeconds'] >= 5
    off = find(objects(render(None, 'fuseki.enabled=true', 'fuseki.dataset=wd', 'fuseki.readinessChecksRevision=false')),
               'Deployment', 'rdf-bulkload-fuseki')[0]['spec']['template']['spec']['containers'][0]
    probe = off['readinessProbe']['httpGet']
    assert probe['path'] == '/wd/query?query=ASK%7B%7D' and probe['port'] == 'http', probe
    assert not any(e['name'] == 'SERVED_REVISION' for e in off['env']), off['env']
    # a stopping pod answers until the Service no longer routes to it
    assert c['lifecycle'] == {'preStop': {'sleep': {'seconds': 5}}}, c.get('lifecycle')
    c = find(objects(render(None, 'fuseki.enabled=true', 'fuseki.preStopSleepSeconds=0')), 'Deployment', 'rdf-bulkload-fuseki')[0]
    assert 'lifecycle' not in c['spec']['template']['spec']['containers'][0]
    for bad in ('fuseki.replicas=2',):
        r = subprocess.run([HELM, 'template', 'x', CHART, '--set', 'fuseki.enabled=true', '--set', bad], capture_output=True, text=True)
        assert r.returncode != 0 and 'replicas' in r.stderr, (bad, r.stderr)


def test_fuseki_is_ready_only_on_the_handed_off_revision():
    """The readiness check runs as written in the chart: before the first handoff (no
    served-revision annotation) the dataset's first answer (the startup probe) decides; after it,
    only a database whose
    build report names the handed-off revision (the fetch step's buildRevision, copied into the
    report by the loader) is Ready, so a pod on the chart's emptyDir or on another revision's
    volume gets no query."""
    import json
    import tempfile
    objs = objects(render(None, 'fuseki.enabled=true'))
    c = find(objs, 'Deployment', 'rdf-bulkload-fuseki')[0]['spec']['template']['spec']['containers'][0]
    env = {e['name']: e for e in c['env']}
    handoff_go = open(os.path.join(ROOT, 'operator/internal/specs/handoff.go')).read()
    assert 'AnnotationServedRevision = "rdf.bulkload.io/served-revision"' in handoff_go
    assert env['SERVED_REVISION']['valueFrom']['fieldRef']['fieldPath'] == "metadata.annotations['rdf.bulkload.io/served-revision']"
    fetch_go = open(os.path.join(ROOT, 'operator/internal/fetch/report.go')).read()
    assert 'json:"buildRevision,omitempty"' in fetch_go, 'the report field the probe greps'
    script = c['readinessProbe']['exec']['command'][2]
    db = '/fuseki/databases/db'
    assert db + '/bulkload-report.json' in script, script
    with tempfile.TemporaryDirectory() as tmp:
        dbdir = os.path.join(tmp, 'db')
        os.makedirs(dbdir)
        local = script.replace(db, dbdir)

        def ready(revision, report):
            path = os.path.join(dbdir, 'bulkload-report.json')
            if os.path.exists(path):
                os.remove(path)
            if report is not None:
                with open(path, 'w') as f:
                    json.dump(report, f, indent=2)   # the loader writes it pretty-printed
            e = dict(os.environ, SERVED_REVISION=revision)
            return subprocess.run(['sh', '-c', local], env=e, capture_output=True, text=True).returncode == 0

        built = {'statements': 3, 'source': {'revision': 'sha256:ab', 'buildRevision': '0123456789'}}
        assert ready('', None), 'before the first handoff the empty dataset serves'
        assert ready('0123456789', built), 'the handed-off revision'
        assert not ready('0123456789', None), "the chart's emptyDir after a handoff"
        assert not ready('9876543210', built), "another revision's database"
        assert ready('0123456789', {'source': {'revision': 'sha256:ab'}}), 'a build from before reports named the revision'


def test_workflow_service_account():
    """By default the chart creates the build pods' ServiceAccount (the samples' and the e2e suite's
    spec.serviceAccountName) with exactly Argo's executor permissions, the same rules as
    config/rbac/workflow_role.yaml; without them every step ends in Error."""
    want = yaml.safe_load(open(os.path.join(ROOT, 'config/rbac/workflow_role.yaml')))['rules']
    assert want == [{'apiGroups': ['argoproj.io'], 'resources': ['workflowtaskresults'], 'verbs': ['create', 'patch']}], want
    for case, namespaces in ((None, [NS]), (case_path('minimal'), [NS]), (case_path('full'), ['rdf', 'rdf-staging'])):
        objs = objects(render(case))
        for ns in namespaces:
            sa = [o for o in find(objs, 'ServiceAccount', 'rdf-bulkload-workflow') if o['metadata']['namespace'] == ns]
            role = [o for o in find(objs, 'Role', 'rdf-bulkload-workflow') if o['metadata']['namespace'] == ns]
            rb = [o for o in find(objs, 'RoleBinding', 'rdf-bulkload-workflow') if o['metadata']['namespace'] == ns]
            assert len(sa) == len(role) == len(rb) == 1, (case, ns)
            assert role[0]['rules'] == want, role[0]['rules']
            assert rb[0]['roleRef'] == {'apiGroup': 'rbac.authorization.k8s.io', 'kind': 'Role', 'name': 'rdf-bulkload-workflow'}
            assert rb[0]['subjects'] == [{'kind': 'ServiceAccount', 'name': 'rdf-bulkload-workflow', 'namespace': ns}]
    objs = objects(render(None, 'argo.workflowServiceAccount.create=false'))
    assert not [o for o in objs if o['metadata']['name'] == 'rdf-bulkload-workflow']
    for p in sorted(glob.glob(os.path.join(ROOT, 'config/samples/rdf_*.yaml'))):
        assert yaml.safe_load(open(p))['spec'].get('serviceAccountName') == 'rdf-bulkload-workflow', p


def test_pods_meet_restricted_pod_security():
    """Every pod the chart makes runs in a namespace enforcing the restricted Pod Security Standard
    (the e2e suite installs into one): non-root, RuntimeDefault seccomp, no privilege escalation,
    all capabilities dropped; also a read-only root filesystem."""
    objs = objects(render(None, 'fuseki.enabled=true'))
    deps = find(objs, 'Deployment')
    assert len(deps) == 2
    for d in deps:
        pod = d['spec']['template']['spec']
        psc = pod.get('securityContext', {})
        for c in pod.get('initContainers', []) + pod['containers']:
            sc = c.get('securityContext', {})
            name = '%s/%s' % (d['metadata']['name'], c['name'])
            assert sc.get('runAsNonRoot', psc.get('runAsNonRoot')) is True, name
            assert sc.get('runAsUser', psc.get('runAsUser', 1)) != 0, name
            seccomp = sc.get('seccompProfile', psc.get('seccompProfile', {})).get('type')
            assert seccomp in ('RuntimeDefault', 'Localhost'), name
            assert sc.get('allowPrivilegeEscalation') is False, name
            assert sc.get('capabilities', {}).get('drop') == ['ALL'] and not sc['capabilities'].get('add'), name
            assert sc.get('readOnlyRootFilesystem') is True, name
            assert not sc.get('privileged'), name
        for v in pod.get('volumes', []):
            assert 'hostPath' not in v, v
        assert not pod.get('hostNetwork') and not pod.get('hostPID') and not pod.get('hostIPC')


def test_minimal():
    objs = objects(render(case_path('minimal')))
    c = find(objs, 'Deployment')[0]['spec']['template']['spec']['containers'][0]
    assert '--leader-elect' not in c['args'] and '--metrics-bind-address=0' in c['args'], c['args']
    assert not [a for a in c['args'] if a.startswith('--metrics-secure') or a.startswith('--metrics-cert-path')]
    assert not [o for o in objs if 'metrics-reader' in o['metadata']['name']]
    assert [p['name'] for p in c['ports']] == ['probes']
    assert not [o for o in objs if (o['kind'] == 'Role' and o['metadata']['name'] != 'rdf-bulkload-workflow')
                or o['metadata']['name'].endswith('-metrics')]
    assert not [o for o in objs if 'bulkload-editor' in o['metadata']['name']]
    assert find(objs, 'ServiceAccount', 'my-operator')


def test_full():
    objs = objects(render(case_path('full')))
    dep = find(objs, 'Deployment', 'rdf-bulkload-controller-manager')[0]
    c = dep['spec']['template']['spec']['containers'][0]
    assert c['image'].endswith('@sha256:' + '0123456789abcdef' * 4), c['image']
    assert dep['spec']['replicas'] == 2 and '--leader-elect' in c['args'] and '--zap-log-level=debug' in c['args']
    env = {e['name']: e['value'] for e in c['env']}
    assert env['RDF_BULKLOAD_ARGO_INSTANCE_ID'] == 'rdf-builds' and env['RDF_BULKLOAD_WORKFLOW_START_TIMEOUT'] == '5m', env
    sm = find(objs, 'ServiceMonitor')[0]
    svc = find(objs, 'Service', 'rdf-bulkload-metrics')[0]
    assert all(svc['metadata']['labels'].get(k) == v for k, v in sm['spec']['selector']['matchLabels'].items())
    assert sm['metadata']['labels']['release'] == 'kube-prometheus-stack'
    assert sm['spec']['endpoints'][0]['port'] == 'metrics'
    # a provided certificate: mounted where --metrics-cert-path points, and verified by the scrape
    cert_path = [a.split('=', 1)[1] for a in c['args'] if a.startswith('--metrics-cert-path=')]
    assert cert_path == ['/tmp/k8s-metrics-server/metrics-certs'], c['args']
    mount = [m for m in c['volumeMounts'] if m['name'] == 'metrics-certs'][0]
    assert mount['mountPath'] == cert_path[0] and mount['readOnly'] is True
    vol = [v for v in dep['spec']['template']['spec']['volumes'] if v['name'] == 'metrics-certs'][0]
    assert vol['secret']['secretName'] == 'rdf-bulkload-metrics-cert', vol
    tls = sm['spec']['endpoints'][0]['tlsConfig']
    assert tls == {'ca': {'secret': {'name': 'rdf-bulkload-metrics-cert', 'key': 'ca.crt'}},
                   'serverName': 'rdf-bulkload-metrics.rdf-bulkload-system.svc'}, tls   # not merged with insecureSkipVerify
    b = find(objs, 'ClusterRoleBinding', 'rdf-bulkload-metrics-reader')[0]
    assert b['subjects'] == [{'kind': 'ServiceAccount', 'name': 'kube-prometheus-stack-prometheus', 'namespace': 'monitoring'}]
    for ns in ('rdf', 'rdf-staging'):
        role = find(objs, 'Role', 'rdf-bulkload-workflow')
        assert any(r['metadata']['namespace'] == ns for r in role)
        assert any(s['metadata']['namespace'] == ns for s in find(objs, 'ServiceAccount', 'rdf-bulkload-workflow'))
    fu = find(objs, 'Deployment', 'rdf-bulkload-fuseki')[0]
    fpod = fu['spec']['template']['spec']
    fc = fpod['containers'][0]
    assert fc['image'] == 'registry.example.org/rdf-bulkload-loader:0.1.0-rc1', fc['image']
    assert fc['command'] == ['java'] and fc['args'][:3] == ['-Xmx8g', '-XX:+UseParallelGC', '-jar'], fc['args']
    assert '--loc' in fc['args'] and fc['args'][fc['args'].index('--loc') + 1] == '/fuseki/databases/db'
    # the operator's handoff replaces the volume named in spec.serving.volumeName
    vols = {v['name']: v for v in fpod['volumes']}
    assert 'databases' in vols and any(m['name'] == 'databases' for m in fc['volumeMounts'])
    assert fc['securityContext']['readOnlyRootFilesystem'] is True and fpod['securityContext']['runAsNonRoot']
    assert fu['spec']['strategy']['type'] == 'RollingUpdate'
    fsvc = find(objs, 'Service', 'rdf-bulkload-fuseki')[0]
    assert fsvc['spec']['selector'] == fu['spec']['selector']['matchLabels']


def go_const(path, name):
    """The string value of a Go constant `name = "..."` in a file of the repository."""
    import re
    m = re.search(r'\b%s\s*=\s*"([^"]*)"' % name, open(os.path.join(ROOT, path)).read())
    assert m, 'no constant %s in %s' % (name, path)
    return m.group(1)


MONITORING_KINDS = ('PodMonitor', 'PrometheusRule')


def test_monitoring_off_by_default():
    for case in (None, case_path('default'), case_path('minimal')):
        objs = objects(render(case))
        assert not [o for o in objs if o['kind'] in MONITORING_KINDS or o['metadata']['name'].endswith('-dashboard')]


def test_pod_monitor_selects_the_build_step_pods():
    """The PodMonitor's selector, port and relabelings are what the operator puts on the fetch and
    load step pods (operator/internal/specs)."""
    pm = find(objects(render(case_path('full'))), 'PodMonitor')[0]
    names = 'operator/internal/specs/names.go'
    want = {go_const(names, 'LabelManagedBy'): go_const(names, 'ManagedBy'), go_const(names, 'LabelRole'): go_const(names, 'RoleBuild')}
    assert pm['spec']['selector']['matchLabels'] == want, pm['spec']['selector']
    bulkload_label = go_const(names, 'LabelBulkLoad')
    assert {'key': bulkload_label, 'operator': 'Exists'} in pm['spec']['selector']['matchExpressions']
    assert pm['spec']['namespaceSelector'] == {'matchNames': ['rdf', 'rdf-staging']}
    assert pm['metadata']['labels']['release'] == 'kube-prometheus-stack'
    ep = pm['spec']['podMetricsEndpoints'][0]
    workflow_go = open(os.path.join(ROOT, 'operator/internal/specs/workflow.go')).read()
    assert 'Name: "%s", ContainerPort: StepMetricsPort' % ep['port'] in workflow_go, ep['port']
    assert 'StepMetricsPort = 9184' in workflow_go
    meta = '__meta_kubernetes_pod_label_' + ''.join(c if c.isalnum() else '_' for c in bulkload_label)
    assert {'sourceLabels': [meta], 'targetLabel': 'bulkload'} in ep['relabelings'], ep['relabelings']
    # without the prometheus-operator: the annotations of the same pods
    for a in ('"prometheus.io/scrape": "true"', '"prometheus.io/port":', '"prometheus.io/path":   "/metrics"'):
        assert a in workflow_go, a
    assert find(objects(render(None, 'monitoring.podMonitor.enabled=true')), 'PodMonitor')[0]['spec']['namespaceSelector'] == {'any': True}


def chart_readme_anchors():
    import re
    anchors = set()
    for line in open(os.path.join(CHART, 'README.md')):
        if line.startswith('#'):
            title = line.lstrip('#').strip().lower()
            anchors.add(re.sub(r'[^a-z0-9 _-]', '', title).replace(' ', '-'))
    return anchors


def test_prometheus_rule():
    """Every alert of files/prometheus-alerts.yaml is rendered with its values (enabled, for, severity,
    the no-recent-build period, extra labels); summary and description name the BulkLoad; the runbook
    is a section of the chart README."""
    source = yaml.safe_load(open(os.path.join(CHART, 'files', 'prometheus-alerts.yaml')))
    source_alerts = {r['alert']: r for g in source['groups'] for r in g['rules']}
    defaults = yaml.safe_load(open(os.path.join(CHART, 'values.yaml')))['monitoring']['prometheusRule']
    assert set(defaults['alerts']) == set(source_alerts), 'values.yaml alerts differ from the rules file'

    def rules(objs):
        pr = find(objs, 'PrometheusRule')[0]
        return pr, {r['alert']: r for g in pr['spec']['groups'] for r in g['rules']}

    _, default = rules(objects(render(None, 'monitoring.prometheusRule.enabled=true')))
    assert set(default) == set(source_alerts)
    anchors = chart_readme_anchors()
    for name, r in default.items():
        assert r.get('for', '0s') == source_alerts[name].get('for', '0s') == defaults['alerts'][name].get('for', '0s'), name
        assert r['labels']['severity'] == defaults['alerts'][name]['severity'], name
        for a in ('summary', 'description'):
            assert '{{ $labels.namespace }}/{{ $labels.bulkload }}' in r['annotations'][a], (name, a)
        url = r['annotations']['runbook_url']
        base, anchor = url.split('#')
        assert base == defaults['runbookBaseURL'] and anchor == name.lower() and anchor in anchors, url
    assert '> 691200' in default['RDFBulkLoadNoRecentBuild']['expr']   # 8d

    pr, full = rules(objects(render(case_path('full'))))
    assert pr['metadata']['labels']['release'] == 'kube-prometheus-stack'
    assert 'RDFBulkLoadServingNotRolled' not in full and len(full) == len(source_alerts) - 1
    assert full['RDFBulkLoadBuildStuck']['for'] == '6h'
    assert full['RDFBulkLoadNoRecentBuild']['labels']['severity'] == 'critical'
    assert '> 1209600' in full['RDFBulkLoadNoRecentBuild']['expr'], full['RDFBulkLoadNoRecentBuild']['expr']   # 2w
    assert all(r['labels']['team'] == 'data' for r in full.values())
    assert full['RDFBulkLoadBuildFailed']['labels']['severity'] == 'critical'


def test_dashboard_config_map():
    import json
    objs = objects(render(case_path('full')))
    cm = find(objs, 'ConfigMap', 'rdf-bulkload-dashboard')[0]
    assert cm['metadata']['labels']['grafana_dashboard'] == '1' and cm['metadata']['annotations'] == {'grafana_folder': 'RDF'}
    dash = json.loads(cm['data']['rdf-bulkload.json'])
    assert dash == json.load(open(os.path.join(CHART, 'files', 'grafana-dashboard.json')))
    titles = [p['title'] for p in dash['panels']]
    for want in ('Build timeline by phase', 'Triples per second', 'Bytes fetched', 'Memory against the budget',
                 'Temporary disk', 'Rejected statements', 'Build durations', 'Snapshot history'):
        assert want in titles, (want, titles)
    assert all(t['expr'] for p in dash['panels'] for t in p['targets'])
    assert len({p['id'] for p in dash['panels']}) == len(dash['panels'])
    other = objects(render(None, 'monitoring.dashboard.enabled=true', 'monitoring.dashboard.label=dashboards',
                           'monitoring.dashboard.labelValue=rdf', 'monitoring.dashboard.namespace=monitoring'))
    cm = find(other, 'ConfigMap', 'rdf-bulkload-dashboard')[0]
    assert cm['metadata']['labels']['dashboards'] == 'rdf' and cm['metadata']['namespace'] == 'monitoring'


def test_schema_rejects_bad_values():
    bad = ['image.digest=latest', 'fuseki.port=0', 'loaderImage.pullPolicy=Sometimes', 'metrics.port=70000', 'replicaCount=-1',
           'noSuchValue=1', 'fuseki.image.pullPolicy=Sometimes', 'metrics.serviceMonitor.interval=soon',
           'image.repository=', 'metrics.reader.subjects[0].kind=Robot', 'metrics.secure=yes',
           'metrics.reader.subjects[0].kind=ServiceAccount,metrics.reader.subjects[0].name=prometheus',
           'monitoring.prometheusRule.noRecentBuildPeriod=8days',
           'monitoring.prometheusRule.alerts.NoSuchAlert.enabled=true', 'monitoring.podMonitor.interval=often',
           'monitoring.prometheusRule.alerts.RDFBulkLoadBuildStuck.for=long', 'argo.instanceID=not/a-label',
           'argo.workflowStartTimeout=soon', 'argo.workflowStartTimeout=']
    accepted = []
    for s in bad:
        r = helm('template', 'x', CHART, '--kube-version', KUBE_VERSION, '--set', s, check=False)
        if r.returncode == 0:
            accepted.append(s)
        elif 'schema' not in r.stderr.lower() and 'values don\'t meet' not in r.stderr.lower():
            accepted.append('%s (failed, but not by the schema: %s)' % (s, r.stderr.strip()[:200]))
    assert not accepted, 'values.schema.json accepts: %s' % accepted
    r = helm('template', 'x', CHART, '--kube-version', KUBE_VERSION, '--set', 'minio.credentialsSecret.create=true',
             check=False)
    assert r.returncode != 0 and 'accessKeyID is required' in r.stderr, r.stderr


def test_every_value_documented():
    """Each key of values.yaml has a comment above it, or sits inside a commented map (helm-docs
    style), and has an entry in values.schema.json."""
    lines = open(os.path.join(CHART, 'values.yaml')).read().splitlines()
    undocumented, stack = [], []   # stack of (indent, documented)
    for i, line in enumerate(lines):
        s = line.strip()
        if not s or s.startswith('#') or s.startswith('-') or ':' not in s:
            continue
        indent = len(line) - len(line.lstrip())
        while stack and stack[-1][0] >= indent:
            stack.pop()
        doc = i > 0 and lines[i - 1].strip().startswith('#')
        inherited = any(d for _, d in stack)
        if s.split(':', 1)[1].strip() and not (doc or inherited):   # leaves; a map's keys carry the docs
            undocumented.append(s)
        stack.append((indent, doc or inherited))
    assert not undocumented, 'values without a comment: %s' % undocumented
    schema = __import__('json').load(open(os.path.join(CHART, 'values.schema.json')))
    values = yaml.safe_load(open(os.path.join(CHART, 'values.yaml')))

    def walk(v, sch, path):
        if isinstance(v, dict) and sch.get('type') == 'object' and 'properties' in sch:
            for k, vv in v.items():
                assert k in sch['properties'], 'values.yaml %s%s has no schema entry' % (path, k)
                walk(vv, sch['properties'][k], path + k + '.')
    walk(values, schema, '')


def check_against_schema(value, sch, path, errors):
    """A small structural OpenAPI v3 check: properties, required, type, enum."""
    t = sch.get('type')
    if sch.get('x-kubernetes-int-or-string'):
        if not isinstance(value, (int, str)):
            errors.append('%s: want int or string' % path)
        return
    types = {'object': dict, 'array': list, 'string': str, 'integer': int, 'boolean': bool, 'number': (int, float)}
    if t and not isinstance(value, types[t]):
        errors.append('%s: want %s, got %r' % (path, t, value))
        return
    if 'enum' in sch and value not in sch['enum']:
        errors.append('%s: %r not in %s' % (path, value, sch['enum']))
    if t == 'object' and 'properties' in sch:
        for k in sch.get('required', []):
            if k not in value:
                errors.append('%s.%s: required' % (path, k))
        for k, v in value.items():
            if k not in sch['properties']:
                if not sch.get('x-kubernetes-preserve-unknown-fields') and 'additionalProperties' not in sch:
                    errors.append('%s.%s: unknown field' % (path, k))
                continue
            check_against_schema(v, sch['properties'][k], '%s.%s' % (path, k), errors)
    if t == 'object' and isinstance(sch.get('additionalProperties'), dict):
        for k, v in value.items():
            check_against_schema(v, sch['additionalProperties'], '%s.%s' % (path, k), errors)
    if t == 'array' and 'items' in sch:
        for i, v in enumerate(value):
            check_against_schema(v, sch['items'], '%s[%d]' % (path, i), errors)


def test_samples_match_crd():
    """config/samples/*.yaml (the README's MinIO + Fuseki sample among them) fit the CRD's schema, and
    the MinIO sample hands off to the chart's Fuseki Deployment and volume."""
    crd = yaml.safe_load(open(os.path.join(CHART, 'files/crd-bulkloads.yaml')))
    schema = crd['spec']['versions'][0]['schema']['openAPIV3Schema']
    samples = sorted(glob.glob(os.path.join(ROOT, 'config/samples/rdf_*.yaml')))
    assert any(p.endswith('_minio.yaml') for p in samples), samples
    for p in samples:
        doc = yaml.safe_load(open(p))
        errors = []
        check_against_schema(doc['spec'], schema['properties']['spec'], 'spec', errors)
        assert not errors, '%s does not fit the CRD: %s' % (os.path.relpath(p, ROOT), errors)
    minio = yaml.safe_load(open(os.path.join(ROOT, 'config/samples/rdf_v1alpha1_bulkload_minio.yaml')))
    objs = objects(render(None, 'fuseki.enabled=true', 'argo.workflowServiceAccount.create=true'))
    fu = find(objs, 'Deployment', minio['spec']['serving']['name'])[0]
    assert minio['spec']['serving']['volumeName'] in [v['name'] for v in fu['spec']['template']['spec']['volumes']]
    assert find(objs, 'ServiceAccount', minio['spec']['serviceAccountName'])


def main():
    passed, failed = 0, []
    for name, fn in sorted((n, f) for n, f in globals().items() if n.startswith('test_') and callable(f)):
        try:
            fn()
            passed += 1
            print('ok   %s' % name, flush=True)
        except Exception as e:  # noqa: BLE001
            failed.append(name)
            print('FAIL %s: %s' % (name, e), flush=True)
            if not isinstance(e, AssertionError):
                traceback.print_exc()
    if UPDATE:
        print('chart: snapshots updated')
    print('chart: %d passed, %d failed' % (passed, len(failed)))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())

#!/usr/bin/env python3
"""End-to-end data path on this machine, with real components (no Kubernetes):

  real MinIO (loopback) holding an N-Triples dump and an N-Quads dump + completion marker
  -> rdf-bulkload-fetch pulls them to DATA/input (as the workflow's fetch step)
  -> rdf-bulkload load builds the TDB2 database at DATA/db (the load step)
  -> rdf-bulkload-validate opens it with Jena (the validate step)
  -> Fuseki (jena-fuseki-server jar) serves it over HTTP on 127.0.0.1
  -> SPARQL over HTTP answers == the answers of Jena's own load of the same dump
     (tdb2.xloader into a reference DB cached under $RDF_BULKLOAD_CACHE/e2e-refs, keyed by
     the Jena version and the inputs' digests). Not tdb2.tdbloader: Jena 5.6.0's default
     loader wraps xsd:integer values beyond 64 bits (e.g. "138680557943187897710" is stored as
     -8893394646488515218), xloader and rdf-bulkload keep them.
Failure paths: a marker-less (half-uploaded) dump set and a corrupted object stop at fetch
with a clear error; a bad line stops at load (strict) or is reported (skip).

Inputs: ../shared/datasets/bsbm-1m.nt.gz + bsbm-1m-ng.nq.gz when present (or
$RDF_BULKLOAD_DATASETS), else the repository's examples/ (catalog.ttl.gz + catalog-graphs.nq.gz).
Env (the Makefile sets them): RDF_BULKLOAD_MINIO, JENA_HOME, RDF_BULKLOAD_FUSEKI_JAR,
RDF_BULKLOAD_LOADER, RDF_BULKLOAD_FETCH, RDF_BULKLOAD_VALIDATE. E2E_KEEP=1 keeps the work dir.
Stdlib only. Ends with the line 'e2e-local: N passed, M failed'.
"""
import contextlib
import glob
import gzip
import hashlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.error
import urllib.parse
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
sys.path.insert(0, os.path.join(ROOT, 'hack'))
from loader_args import load_step_args  # noqa: E402  (the load step's command line, not restated here)

CACHE = os.environ.get('RDF_BULKLOAD_CACHE', os.path.expanduser('~/.cache/rdf-bulkload'))
JENA_VERSION = '5.6.0'


# `e2e_local.py compare-endpoint URL FILE...` (the cluster suite's SPARQL check) needs Jena only.
COMPARE_ONLY = sys.argv[1:2] == ['compare-endpoint']


def env_path(name, default, needed=True):
    p = os.environ.get(name) or default
    if not p or not os.path.exists(p):
        if not needed:
            return None
        sys.exit('e2e-local: %s not found (%s); run it through `make e2e-local`' % (name, p))
    return os.path.abspath(p)


MINIO = env_path('RDF_BULKLOAD_MINIO', None, not COMPARE_ONLY)
MC = MINIO and os.path.join(os.path.dirname(MINIO), 'mc')
JENA_HOME = env_path('JENA_HOME', os.path.join(CACHE, 'jena-5.6.0', 'apache-jena-5.6.0'))
FUSEKI_JAR = env_path('RDF_BULKLOAD_FUSEKI_JAR', os.path.join(CACHE, 'jena-5.6.0', 'jena-fuseki-server-5.6.0.jar'))
LOADER = env_path('RDF_BULKLOAD_LOADER', os.path.join(ROOT, 'loader-image/target/release/rdf-bulkload'), not COMPARE_ONLY)
FETCH = env_path('RDF_BULKLOAD_FETCH', os.path.join(ROOT, 'bin/rdf-bulkload-fetch'), not COMPARE_ONLY)
VALIDATE = env_path('RDF_BULKLOAD_VALIDATE', os.path.join(ROOT, 'loader-image/validate/rdf-bulkload-validate'), not COMPARE_ONLY)


def datasets():
    """(N-Triples-ish dump, N-Quads dump, where from)."""
    d = os.environ.get('RDF_BULKLOAD_DATASETS') or os.path.join(ROOT, '..', 'shared', 'datasets')
    nt, nq = os.path.join(d, 'bsbm-1m.nt.gz'), os.path.join(d, 'bsbm-1m-ng.nq.gz')
    if os.path.exists(nt) and os.path.exists(nq):
        return nt, nq, 'shared datasets (BSBM 1M)'
    nt, nq = os.path.join(ROOT, 'examples/catalog.ttl.gz'), os.path.join(ROOT, 'examples/catalog-graphs.nq.gz')
    if os.path.exists(nt) and os.path.exists(nq):
        return nt, nq, 'examples/'
    sys.exit('e2e-local: no input data: neither %s nor examples/catalog*.gz' % d)


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, 'rb') as f:
        for b in iter(lambda: f.read(1 << 20), b''):
            h.update(b)
    return h.hexdigest()


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def host_load_args(case, work, loc, inputs, replace=None):
    """The load step's arguments for golden case `case`, on this machine: the database at loc, the
    work directory, reports and metrics under work (a free port), inputs as given."""
    paths = {'--loc': loc, '--tmpdir': os.path.join(work, 'tmp'), '--report': os.path.join(work, 'report.json'),
             '--summary': os.path.join(work, 'summary.json'),
             '--source-report': os.path.join(work, 'fetch.json'), '--metrics-addr': '127.0.0.1:0'}
    paths.update(replace or {})
    return load_step_args(case, paths, inputs=[inputs])


def run(cmd, env=None, timeout=900, **kw):
    """Run a command; CompletedProcess with text stdout/stderr."""
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=timeout, **kw)


def stop_group(proc):
    if proc is not None and proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(20)


# ------------------------------------------------------------------------------ MinIO
class MinIO:
    """A real MinIO server on 127.0.0.1 with random credentials (passed through env only)."""

    def __init__(self, work):
        self.work = work
        self.user = 'e2e-' + secrets.token_hex(4)
        self.password = 'pw-' + secrets.token_hex(16)
        self.proc = None

    def start(self):
        for _ in range(3):
            self.port = free_port()
            self.log = open(os.path.join(self.work, 'minio.log'), 'w+')
            self.proc = subprocess.Popen(
                [MINIO, 'server', os.path.join(self.work, 'minio-data'), '--address', '127.0.0.1:%d' % self.port,
                 '--console-address', '127.0.0.1:%d' % free_port(), '--quiet'],
                env=dict(os.environ, MINIO_ROOT_USER=self.user, MINIO_ROOT_PASSWORD=self.password,
                         MINIO_BROWSER='off', MINIO_UPDATE='off', MINIO_CI_CD='1'),
                stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
            deadline = time.time() + 60
            while time.time() < deadline and self.proc.poll() is None:
                try:
                    with urllib.request.urlopen(self.endpoint + '/minio/health/ready', timeout=2) as r:
                        if r.status == 200:
                            return self
                except (urllib.error.URLError, OSError):
                    time.sleep(0.3)
            stop_group(self.proc)
        self.log.seek(0)
        raise AssertionError('MinIO did not start:\n' + self.log.read()[-3000:])

    @property
    def endpoint(self):
        return 'http://127.0.0.1:%d' % self.port

    def mc(self, *args):
        env = {'MC_CONFIG_DIR': os.path.join(self.work, 'mc-config'),
               'MC_HOST_e2e': 'http://%s:%s@127.0.0.1:%d' % (self.user, self.password, self.port)}
        r = run([MC, '--no-color', '--quiet'] + list(args), env=env, timeout=300)
        assert r.returncode == 0, 'mc %s failed (%d): %s' % (args[0], r.returncode, r.stderr[-2000:])
        return r.stdout

    def put(self, path, key):
        self.mc('cp', path, 'e2e/dumps/' + key)

    @property
    def creds_env(self):
        return {'AWS_ACCESS_KEY_ID': self.user, 'AWS_SECRET_ACCESS_KEY': self.password}

    def stop(self):
        stop_group(self.proc)


# ----------------------------------------------------------------------------- Fuseki
class Fuseki:
    """java -jar jena-fuseki-server.jar --loc DB /ds on a free loopback port (read-only)."""

    def __init__(self, db, work, name):
        self.db, self.work, self.name = db, work, name
        self.proc = None

    def start(self):
        for _ in range(3):
            self.port = free_port()
            self.log = open(os.path.join(self.work, 'fuseki-%s.log' % self.name), 'w+')
            self.proc = subprocess.Popen(
                ['java', '-Xmx1G', '-jar', FUSEKI_JAR, '--tdb2', '--loc', self.db, '--localhost',
                 '--port', str(self.port), '--ping', '/ds'],
                stdout=self.log, stderr=subprocess.STDOUT, cwd=self.work, start_new_session=True)
            deadline = time.time() + 120
            while time.time() < deadline and self.proc.poll() is None:
                try:
                    with urllib.request.urlopen('http://127.0.0.1:%d/$/ping' % self.port, timeout=2) as r:
                        if r.status == 200:
                            return self
                except (urllib.error.URLError, OSError):
                    time.sleep(0.3)
            stop_group(self.proc)
        self.log.seek(0)
        raise AssertionError('Fuseki did not start on %s:\n%s' % (self.db, self.log.read()[-3000:]))

    def query(self, q):
        return sparql_query('http://127.0.0.1:%d/ds/sparql' % self.port, q)

    def stop(self):
        stop_group(self.proc)


def sparql_query(url, q):
    """One SPARQL query over HTTP (POST form), the JSON result."""
    req = urllib.request.Request(
        url, data=urllib.parse.urlencode({'query': q}).encode(),
        headers={'Accept': 'application/sparql-results+json',
                 'Content-Type': 'application/x-www-form-urlencoded'})
    try:
        with urllib.request.urlopen(req, timeout=600) as r:
            assert r.status == 200, 'Fuseki answered HTTP %d' % r.status
            return json.loads(r.read().decode('utf-8'))
    except urllib.error.HTTPError as e:
        raise AssertionError('Fuseki HTTP %d for %s: %s' % (e.code, q, e.read()[:2000])) from None


# ---------------------------------------------------------------------- SPARQL probes
PREFIXES = ('PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>\n'
            'PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>\n'
            'PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n')
# Generic queries (no knowledge of the data baked in): counts, per-predicate/class/graph
# figures, inline values (numbers, dates) through FILTERs, language tags, joins, lookups.
QUERIES = {
    'triples': 'SELECT (COUNT(*) AS ?n) { ?s ?p ?o }',
    'quads': 'SELECT (COUNT(*) AS ?n) { GRAPH ?g { ?s ?p ?o } }',
    'distinct-subjects': 'SELECT (COUNT(DISTINCT ?s) AS ?n) { ?s ?p ?o }',
    'per-predicate': 'SELECT ?p (COUNT(*) AS ?n) { ?s ?p ?o } GROUP BY ?p ORDER BY ?p',
    'per-class': 'SELECT ?c (COUNT(*) AS ?n) { ?s a ?c } GROUP BY ?c ORDER BY DESC(?n) ?c LIMIT 40',
    'per-graph': 'SELECT ?g (COUNT(*) AS ?n) { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g ORDER BY DESC(?n) ?g LIMIT 40',
    'graph-predicates': 'SELECT ?p (COUNT(*) AS ?n) { GRAPH ?g { ?s ?p ?o } } GROUP BY ?p ORDER BY ?p',
    'datatypes': 'SELECT ?dt (COUNT(*) AS ?n) { ?s ?p ?o FILTER(isLiteral(?o)) BIND(datatype(?o) AS ?dt) } '
                 'GROUP BY ?dt ORDER BY ?dt',
    'languages': 'SELECT ?l (COUNT(*) AS ?n) { ?s ?p ?o FILTER(lang(?o) != "") BIND(lang(?o) AS ?l) } '
                 'GROUP BY ?l ORDER BY ?l',
    'numeric-range': 'SELECT ?s ?p ?o { ?s ?p ?o FILTER(isNumeric(?o) && ?o >= 100 && ?o < 110) } '
                     'ORDER BY ?s ?p ?o LIMIT 100',
    'numeric-sum': 'SELECT ?p (SUM(?o) AS ?sum) (MIN(?o) AS ?min) (MAX(?o) AS ?max) '
                   '{ ?s ?p ?o FILTER(isNumeric(?o)) } GROUP BY ?p ORDER BY ?p',
    'dates': 'SELECT ?p (MIN(?o) AS ?min) (MAX(?o) AS ?max) (COUNT(*) AS ?n) '
             '{ ?s ?p ?o FILTER(datatype(?o) = xsd:date || datatype(?o) = xsd:dateTime) } GROUP BY ?p ORDER BY ?p',
    'labels-join': 'SELECT ?s ?t ?label { ?s rdfs:label ?label ; a ?t } ORDER BY ?s ?t ?label LIMIT 50',
    'describe-first': 'SELECT ?s ?p ?o { { SELECT ?s { ?s rdfs:label ?l } ORDER BY ?s LIMIT 1 } ?s ?p ?o } '
                      'ORDER BY ?p ?o',
    'text-filter': 'SELECT (COUNT(*) AS ?n) { ?s rdfs:label ?l FILTER(CONTAINS(LCASE(STR(?l)), "a")) }',
    'ask-true': 'ASK { GRAPH ?g { ?s ?p ?o } }',
    'ask-false': 'ASK { ?s ?p "no such literal in the e2e data 7f3c" }',
}


def canonical(result, query):
    """Comparable form of a SPARQL JSON result: ordered when the query orders, else sorted."""
    if 'boolean' in result:
        return result['boolean']
    vars_ = result['head']['vars']
    rows = []
    for b in result['results']['bindings']:
        row = []
        for v in vars_:
            t = b.get(v)
            if t is None:
                row.append(None)
            elif t['type'] == 'bnode':
                row.append(('bnode',))   # labels are per-database; positions are compared
            else:
                row.append((t['type'], t['value'], t.get('datatype'), t.get('xml:lang')))
        rows.append(row)
    if 'ORDER BY' not in query:
        rows.sort(key=repr)
    return [vars_, rows]


def scalar(result):
    b = result['results']['bindings'][0]
    return int(b[result['head']['vars'][0]]['value'])


# ------------------------------------------------------------------ Jena's reference
def reference(files, work):
    """Jena's own load of `files` (tdb2.xloader) and its answers to QUERIES through Fuseki,
    cached under $RDF_BULKLOAD_CACHE/e2e-refs/<key>/ (key: Jena version + input digests)."""
    h = hashlib.sha256(('tdb2.xloader %s\n' % JENA_VERSION).encode())
    for f in files:
        h.update(('%s %s\n' % (os.path.basename(f), sha256_file(f))).encode())
    key = h.hexdigest()[:24]
    qkey = hashlib.sha256(json.dumps(QUERIES, sort_keys=True).encode()).hexdigest()[:16]
    base = os.path.join(CACHE, 'e2e-refs', 'jena-%s' % JENA_VERSION, key)
    answers_file = os.path.join(base, 'answers-%s.json' % qkey)
    if os.path.exists(answers_file):
        with open(answers_file) as f:
            return json.load(f), 'cached'
    db = os.path.join(base, 'db')
    if not os.path.isdir(db):
        os.makedirs(base, exist_ok=True)
        tmp = tempfile.mkdtemp(prefix='.db-', dir=base)
        sort_tmp = tempfile.mkdtemp(prefix='.sort-', dir=base)
        r = run(['nice', os.path.join(JENA_HOME, 'bin', 'tdb2.xloader'), '--loc', os.path.join(tmp, 'db'),
                 '--tmpdir', sort_tmp] + list(files),
                env={'JENA_HOME': JENA_HOME, 'JVM_ARGS': '-Xmx2G'}, timeout=2400)
        shutil.rmtree(sort_tmp, ignore_errors=True)
        if r.returncode != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            raise AssertionError('tdb2.xloader failed: %s' % r.stderr[-3000:])
        os.rename(os.path.join(tmp, 'db'), tmp + '.db')
        shutil.rmtree(tmp, ignore_errors=True)
        tmp = tmp + '.db'
        os.rename(tmp, db)
    fu = Fuseki(db, work, 'reference').start()
    try:
        answers = {name: fu.query(PREFIXES + q) for name, q in QUERIES.items()}
    finally:
        fu.stop()
    tmpf = answers_file + '.tmp'
    with open(tmpf, 'w') as f:
        json.dump(answers, f)
    os.rename(tmpf, answers_file)
    return answers, 'built now'


def compare_answers(query, ref):
    """Ask every probe through `query` and fail with the differences from Jena's answers `ref`."""
    diffs = []
    for name, q in QUERIES.items():
        got = query(PREFIXES + q)
        if canonical(got, q) != canonical(ref[name], q):
            diffs.append('%s: got %s\n  Jena %s' % (name, json.dumps(canonical(got, q))[:600],
                                                    json.dumps(canonical(ref[name], q))[:600]))
    assert not diffs, '%d of %d queries differ from Jena\'s load:\n' % (len(diffs), len(QUERIES)) + \
        '\n'.join(diffs)


def compare_endpoint(url, files):
    """The cluster suite's check: a SPARQL endpoint serving a load of `files` answers every probe
    as Fuseki does over Jena's own load of them. Prints the reference counts as JSON."""
    work = tempfile.mkdtemp(prefix='rdf-bulkload-e2e-ref-')
    try:
        ref, how = reference(files, work)
        compare_answers(lambda q: sparql_query(url, q), ref)
    except AssertionError as e:
        print('e2e-local compare-endpoint: %s' % e, file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps({'queries': len(QUERIES), 'reference': how,
                      'triples': scalar(ref['triples']), 'quads': scalar(ref['quads'])}))
    return 0


# ----------------------------------------------------------------------------- suite
class Suite:
    def __init__(self):
        self.passed, self.failed = 0, []

    def check(self, name, fn, *args):
        t0 = time.time()
        try:
            fn(*args)
        except Exception as e:  # noqa: BLE001 - every failure is reported, the run goes on
            self.failed.append(name)
            print('FAIL %s (%.1fs): %s' % (name, time.time() - t0, e), flush=True)
            if not isinstance(e, AssertionError):
                traceback.print_exc()
            return False
        self.passed += 1
        print('ok   %s (%.1fs)' % (name, time.time() - t0), flush=True)
        return True


def fetch_cmd(minio, prefix, dest, report, marker=None, manifest=None):
    cmd = [FETCH, '--endpoint', minio.endpoint, '--bucket', 'dumps', '--prefix', prefix,
           '--include', '*.gz', '--dest', dest, '--report', report, '--parallel', '4', '--retries', '1',
           '--retry-base', '100ms', '--progress-interval', '1m']
    if marker:
        cmd += ['--marker', marker]
    if manifest:
        cmd += ['--manifest', manifest]
    return cmd


def assert_no_secret(minio, *texts):
    for t in texts:
        assert minio.password not in t, 'the secret key appears in the output'


def main():
    nt, nq, origin = datasets()
    keep = os.environ.get('E2E_KEEP') == '1'
    work = tempfile.mkdtemp(prefix='rdf-bulkload-e2e-', dir=os.environ.get('E2E_WORKDIR'))
    print('e2e-local: inputs from %s: %s, %s; work dir %s' % (
        origin, os.path.basename(nt), os.path.basename(nq), work), flush=True)
    suite = Suite()
    minio = MinIO(work)
    fuseki = None
    state = {}
    t_start = time.time()
    try:
        minio.start()
        minio.mc('mb', 'e2e/dumps')
        prefix = 'bsbm/2026-11-20/'
        # The workflow's layout (operator/internal/specs/workflow.go): the fetch step writes
        # /scratch/input and /scratch/fetch-report.json; the load step sees /scratch/input as
        # /data/input and writes /data/db, /data/report.json, with /scratch/tmp for its runs.
        data = os.path.join(work, 'data')      # the build volume (/data)
        scratch = os.path.join(work, 'scratch')  # the scratch volume (/scratch)
        inputs = os.path.join(scratch, 'input')
        fetch_report = os.path.join(scratch, 'fetch-report.json')
        db = os.path.join(data, 'db')
        os.makedirs(data)

        # --- the dump set is uploaded, but its completion marker is not there yet
        def refuses_incomplete():
            minio.put(nt, prefix + os.path.basename(nt))
            # nested key: the load step gets the input directory whole and loads every file below it
            minio.put(nq, prefix + 'graphs/' + os.path.basename(nq))
            d = os.path.join(work, 'early')
            r = run(fetch_cmd(minio, prefix, d, os.path.join(work, 'early.json'), marker=prefix + '_SUCCESS'),
                    env=minio.creds_env)
            assert r.returncode == 3, 'fetch without the marker: exit %d, want 3\n%s' % (r.returncode, r.stderr[-2000:])
            assert '_SUCCESS' in r.stderr, 'the error does not name the missing marker:\n' + r.stderr[-2000:]
            got = [f for _, _, fs in os.walk(d) for f in fs if f.endswith('.gz')] if os.path.isdir(d) else []
            assert not got, 'fetch wrote dumps of an incomplete set: %s' % got
        suite.check('fetch refuses a dump set without its completion marker', refuses_incomplete)

        def fetch_complete():
            with tempfile.NamedTemporaryFile('w', suffix='.marker', dir=work, delete=False) as m:
                m.write('complete\n')
            minio.put(m.name, prefix + '_SUCCESS')
            report = fetch_report
            t0 = time.time()
            r = run(fetch_cmd(minio, prefix, inputs, report, marker=prefix + '_SUCCESS'), env=minio.creds_env)
            state['fetch_s'] = time.time() - t0
            assert r.returncode == 0, 'fetch: exit %d\n%s' % (r.returncode, r.stderr[-3000:])
            assert_no_secret(minio, r.stdout, r.stderr, open(report).read())
            # the dumps under their relative keys (the fetch keeps its state in a hidden directory)
            fetched = sorted(os.path.join(dp, f) for dp, dns, fs in os.walk(inputs)
                             for f in fs if not any(c.startswith('.') for c in
                                                    os.path.relpath(dp, inputs).split(os.sep) if c != '.'))
            assert os.path.isfile(os.path.join(inputs, 'graphs', os.path.basename(nq))), 'nested key not kept'
            names = sorted(os.path.basename(f) for f in fetched)
            assert names == sorted([os.path.basename(nt), os.path.basename(nq)]), 'fetched %s' % names
            for f in fetched:
                src = nt if os.path.basename(f) == os.path.basename(nt) else nq
                assert sha256_file(f) == sha256_file(src), '%s differs from the uploaded object' % f
            state['inputs'] = fetched
        fetched_ok = suite.check('fetch pulls the complete dump set byte for byte (credentials via env only)',
                                 fetch_complete)

        # Jena's own load of the same dump (cached), in the order the loader gets them.
        ref_files = [nt, nq]
        t0 = time.time()
        ref, how = reference(ref_files, work)
        print('     reference: Jena tdb2.xloader answers %s (%.1fs)' % (how, time.time() - t0), flush=True)
        ref_triples, ref_quads = scalar(ref['triples']), scalar(ref['quads'])

        def load():
            assert fetched_ok, 'no inputs (fetch failed)'
            t0 = time.time()
            # the load step's command line as the operator writes it (specs.LoaderArgs, from its
            # golden file), on this machine's paths; the input directory passed whole
            r = run(['nice', LOADER] + load_step_args('defaults', {
                '--loc': db, '--tmpdir': os.path.join(scratch, 'tmp'), '--report': os.path.join(data, 'report.json'),
                '--summary': os.path.join(data, 'summary.json'),
                '--source-report': fetch_report, '--metrics-addr': '127.0.0.1:0'}, inputs=[inputs]))
            state['load_s'] = time.time() - t0
            assert r.returncode == 0, 'load: exit %d\n%s' % (r.returncode, r.stderr[-3000:])
            assert os.path.isdir(os.path.join(db, 'Data-0001')), 'no Data-0001 in %s' % db
            with open(os.path.join(db, 'bulkload-report.json')) as f:
                rep = json.load(f)
            assert (rep['triples'], rep['quads'], rep['rejects']) == (ref_triples, ref_quads, 0), \
                'report says %d triples, %d quads, %d rejects; Jena loads %d triples, %d quads' % (
                    rep['triples'], rep['quads'], rep['rejects'], ref_triples, ref_quads)
            assert sorted(os.path.basename(i['path']) for i in rep['inputs']) == sorted(
                [os.path.basename(nt), os.path.basename(nq)]), rep['inputs']
            with open(os.path.join(data, 'report.json')) as f:
                outer = json.load(f)
            assert outer['triples'] == rep['triples'] and outer.get('source'), \
                'the build report at --report lacks the fetch report (--source-report)'
            # the load step's output parameter (--summary): the figures and the report's path only
            with open(os.path.join(data, 'summary.json')) as f:
                summary = json.load(f)
            assert (summary['triples'], summary['quads'], summary['rejects']) == (rep['triples'], rep['quads'], 0) \
                and summary['report'] == os.path.join(data, 'report.json') and 'source' not in summary, summary
        loaded = suite.check('load builds the TDB2 database; its report counts what Jena loads', load)

        def validate():
            assert loaded, 'no database (load failed)'
            r = run([VALIDATE, '--loc', db], env={'JENA_HOME': JENA_HOME})
            assert r.returncode == 0, 'validate: exit %d\n%s' % (r.returncode, r.stderr[-3000:])
            out = json.loads(r.stdout.strip().splitlines()[-1])
            assert out['valid'] and out['ask'] and out['sample_predicates'], out
            assert (out['triples'], out['quads']) == (ref_triples, ref_quads), \
                'validate: %d/%d, Jena reference %d/%d' % (out['triples'], out['quads'], ref_triples, ref_quads)
        suite.check('validate opens the database with Jena and its counts match', validate)

        def validate_refuses():
            empty = os.path.join(work, 'not-a-db')
            os.makedirs(empty)
            r = run([VALIDATE, '--loc', empty], env={'JENA_HOME': JENA_HOME})
            assert r.returncode == 4 and 'no database' in r.stderr, (r.returncode, r.stderr)
            broken = os.path.join(work, 'broken-db')
            shutil.copytree(db, broken)
            with open(os.path.join(broken, 'Data-0001', 'nodes.dat'), 'r+b') as f:
                f.truncate(5)
            r = run([VALIDATE, '--loc', broken], env={'JENA_HOME': JENA_HOME})
            assert r.returncode == 3 and 'Jena could not open' in r.stderr, (r.returncode, r.stderr[-2000:])
            # an empty dump loads into a valid but empty database: validate refuses it
            empty_nt = os.path.join(work, 'empty.nt')
            open(empty_nt, 'w').close()
            r = run([LOADER, 'load', '--loc', os.path.join(work, 'empty-db'), empty_nt])
            assert r.returncode == 0, r.stderr[-1000:]
            r = run([VALIDATE, '--loc', os.path.join(work, 'empty-db')], env={'JENA_HOME': JENA_HOME})
            assert r.returncode == 3 and 'is empty' in r.stderr, (r.returncode, r.stderr[-2000:])
        suite.check('validate fails clearly on a missing, broken or empty database', validate_refuses)

        def sparql():
            nonlocal fuseki
            assert loaded, 'no database (load failed)'
            fuseki = Fuseki(db, work, 'ours').start()
            compare_answers(fuseki.query, ref)
            assert ref_triples > 0 and ref_quads > 0, 'the reference is empty'
        suite.check('Fuseki serves it: %d SPARQL queries over HTTP equal Jena\'s own load' % len(QUERIES), sparql)
        if fuseki:
            fuseki.stop()

        # --- a corrupted object: the manifest's digest is of the published bytes, the object is not
        # small dumps made of whole N-Quads lines of the quads dump (blank-node free, so distinct
        # lines are distinct quads)
        sample = os.path.join(work, 'sample.nq')
        with gzip.open(nq, 'rt', encoding='utf-8') as src, open(sample, 'w', encoding='utf-8') as out:
            lines = []
            for line in src:
                if line.strip() and not line.startswith('#') and '_:' not in line:
                    lines.append(line)
                if len(lines) == 2000:
                    break
            out.writelines(lines)

        def corrupted():
            good = os.path.join(work, 'part-1.nq.gz')
            with open(sample, 'rb') as f, gzip.open(good, 'wb') as g:
                g.write(f.read())
            with open(os.path.join(work, 'SHA256SUMS'), 'w') as m:
                m.write('%s  part-1.nq.gz\n' % sha256_file(good))
            bad = os.path.join(work, 'corrupt', 'part-1.nq.gz')
            os.makedirs(os.path.dirname(bad))
            blob = bytearray(open(good, 'rb').read())
            blob[len(blob) // 2] ^= 0xFF
            open(bad, 'wb').write(blob)
            minio.put(bad, 'corrupt/part-1.nq.gz')
            minio.put(os.path.join(work, 'SHA256SUMS'), 'corrupt/SHA256SUMS')
            d = os.path.join(work, 'corrupt-data', 'input')
            r = run(fetch_cmd(minio, 'corrupt/', d, os.path.join(work, 'corrupt-report.json'),
                              manifest='corrupt/SHA256SUMS'), env=minio.creds_env)
            assert r.returncode == 3, 'fetch of a corrupted object: exit %d, want 3\n%s' % (r.returncode, r.stderr)
            assert 'part-1.nq.gz' in r.stderr and any(w in r.stderr.lower() for w in ('digest', 'checksum', 'sha256')), \
                'the error does not say which object is corrupt and why:\n' + r.stderr[-2000:]
            assert_no_secret(minio, r.stdout, r.stderr)
            done = glob.glob(os.path.join(d, '*'))
            assert not done, 'the corrupted object was left where the load step reads its inputs: %s' % done
            print('     fetch said: %s' % r.stderr.strip().splitlines()[-1][:300], flush=True)
        suite.check('a corrupted object stops the path at fetch with a clear error', corrupted)

        # --- a bad line: strict stops the load with file:line:col; skip reports it
        bad_line_no = 3
        badset = os.path.join(work, 'badset')
        os.makedirs(badset)
        bad_nt = os.path.join(badset, 'part-1.nq.gz')
        good_lines = lines[:200]
        with gzip.open(bad_nt, 'wt', encoding='utf-8') as g:
            g.writelines(good_lines[:bad_line_no - 1])
            g.write('<http://example.org/s> <http://example.org/p> "unterminated .\n')
            g.writelines(good_lines[bad_line_no - 1:])
        minio.put(bad_nt, 'badline/part-1.nq.gz')
        minio.put(os.path.join(work, 'SHA256SUMS'), 'badline/_SUCCESS')
        bdata = os.path.join(work, 'bad-data')

        def bad_fetch_then_strict():
            r = run(fetch_cmd(minio, 'badline/', os.path.join(bdata, 'input'), os.path.join(bdata, 'fetch.json'),
                              marker='badline/_SUCCESS'), env=minio.creds_env)
            assert r.returncode == 0, 'fetch: exit %d\n%s' % (r.returncode, r.stderr[-2000:])
            inp = os.path.join(bdata, 'input')   # the input directory, as the load step gets it
            loc = os.path.join(bdata, 'db')
            r = run([LOADER] + host_load_args('defaults', bdata, loc, inp))
            assert r.returncode == 3, 'strict load of a bad line: exit %d, want 3\n%s' % (r.returncode, r.stderr)
            want = 'part-1.nq.gz:%d:' % bad_line_no
            assert want in r.stderr, 'no "%s<col>: reason" in:\n%s' % (want, r.stderr[-2000:])
            assert not os.path.exists(loc), 'a strict failure left a database at %s' % loc
        strict_ok = suite.check('a bad line stops the load (strict) with file:line:col', bad_fetch_then_strict)

        def skip_reports():
            assert strict_ok, 'no fetched input'
            inp = os.path.join(bdata, 'input')   # the input directory, as the load step gets it
            loc = os.path.join(bdata, 'db-skip')
            rejects = os.path.join(bdata, 'rejects.jsonl')
            r = run([LOADER] + host_load_args('skip-default-limit', bdata, loc, inp, {'--rejects': rejects}))
            assert r.returncode == 0, 'skip load: exit %d\n%s' % (r.returncode, r.stderr[-2000:])
            rej = [line for line in open(rejects) if line.strip()]
            assert len(rej) == 1 and str(bad_line_no) in rej[0] and 'part-1.nq.gz' in rej[0], rej
            rep = json.load(open(os.path.join(loc, 'bulkload-report.json')))
            assert rep['rejects'] == 1, rep['rejects']
            v = run([VALIDATE, '--loc', loc], env={'JENA_HOME': JENA_HOME})
            assert v.returncode == 0, v.stderr
            seen = json.loads(v.stdout.strip().splitlines()[-1])
            assert seen['triples'] + seen['quads'] == len(set(good_lines)), (v.stdout, len(set(good_lines)))
            r = run([LOADER] + host_load_args('skip-no-rejects-allowed', bdata, loc + '-limit', inp,
                                              {'--rejects': os.path.join(bdata, 'rejects-limit.jsonl')}))
            assert r.returncode == 3 and not os.path.exists(loc + '-limit'), \
                'skip with --max-rejects 0: exit %d\n%s' % (r.returncode, r.stderr[-1000:])
        suite.check('a bad line is reported (skip): rejects file, report, Jena sees the rest', skip_reports)
    except Exception as e:  # noqa: BLE001
        suite.failed.append('setup')
        print('FAIL setup: %s' % e, flush=True)
        traceback.print_exc()
    finally:
        if fuseki:
            fuseki.stop()
        minio.stop()
    total = time.time() - t_start
    print('e2e-local: %.0fs in all (fetch %.1fs, load %.1fs)' % (
        total, state.get('fetch_s', 0), state.get('load_s', 0)))
    if suite.failed or keep:
        print('e2e-local: work dir kept: %s' % work)
    else:
        shutil.rmtree(work, ignore_errors=True)
    print('e2e-local: %d passed, %d failed' % (suite.passed, len(suite.failed)))
    return 1 if suite.failed else 0


if __name__ == '__main__':
    if COMPARE_ONLY:
        if len(sys.argv) < 4:
            sys.exit('usage: e2e_local.py compare-endpoint SPARQL_URL FILE...')
        sys.exit(compare_endpoint(sys.argv[2], sys.argv[3:]))
    sys.exit(main())

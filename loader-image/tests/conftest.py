"""Fixtures for the loader fidelity suites (real Jena 5.6.0 and Fuseki are the oracles).

Environment:
  RDF_BULKLOAD        path of the loader binary (default loader-image/target/release/rdf-bulkload)
  RDF_BULKLOAD_CMD    a whole command (shell words) used instead of the binary; only for proving the
                      harness with a stand-in (tests/standin_refwriter.py) before the loader exists
  RDF_BULKLOAD_CACHE  cache root (default ~/.cache/rdf-bulkload): Jena, venv, xloader references
  RDF_BULKLOAD_JENA_REFS  directory of the Jena references (default
                      $RDF_BULKLOAD_CACHE/jena-refs/jena-5.6.0): another one, e.g. empty, builds a
                      fresh set there (to compare with the usual one) and leaves the usual one alone
  JENA_HOME           Jena distribution (default $RDF_BULKLOAD_CACHE/jena-5.6.0/apache-jena-5.6.0)
  RDF_BULKLOAD_FUSEKI_JAR  Fuseki server jar (default beside JENA_HOME)
  RDF_BULKLOAD_JVM_ARGS  JVM options for Jena (default -Xmx2G)
  RDF_BULKLOAD_JAVA21_HOME  a Java 21+ home for Jena 6.2.0 (default: $JAVA_HOME if 21+, else
                      /usr/lib/jvm/temurin-25-jdk-amd64); none: its tests fail under CI=true
  CI=true             ../shared must be present: cases that need it fail instead of skipping

Jena runs in one JVM per session (JenaServer below, tests/jena/JenaServer.java): tdb2.xloader's
steps, tdbloader, tdbdump, tdbquery, tdbstats and riot are Jena's own command classes called
in-process with the scripts' arguments, not a JVM start (and a cold JIT) per step. Only what must
be the command line itself (how a Jena tool fails or exits) runs `bin/` scripts (Jena.cmd).
"""
import collections
import contextlib
import fcntl
import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time

import pytest

TESTS = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, TESTS)

import rdfcanon  # noqa: E402
import tdb2read  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(TESTS))
SHARED = os.path.normpath(os.path.join(ROOT, '..', 'shared'))
CACHE = os.environ.get('RDF_BULKLOAD_CACHE') or os.path.expanduser('~/.cache/rdf-bulkload')
JENA_VERSION = '5.6.0'
IN_CI = os.environ.get('CI') == 'true'
EDGE = os.path.join(TESTS, 'data', 'edge')

# Loader exit codes (the CLI contract).
EXIT_OK, EXIT_USAGE, EXIT_BAD_INPUT, EXIT_MISSING, EXIT_RESOURCES, EXIT_INTERRUPTED, EXIT_INTERNAL = 0, 2, 3, 4, 5, 6, 70


def shared_path(*rel):
    """Path under ../shared, or skip (fail under CI=true, where ../shared is guaranteed)."""
    p = os.path.join(SHARED, *rel)
    if not os.path.exists(p):
        msg = '%s is absent' % p
        if IN_CI:
            pytest.fail(msg + ' (CI=true guarantees ../shared)')
        pytest.skip(msg)
    return p


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, 'rb') as f:
        for chunk in iter(lambda: f.read(1 << 20), b''):
            h.update(chunk)
    return h.hexdigest()


def run(cmd, timeout=1800, **kw):
    """Run a command, capture text output; never raises on a non-zero exit."""
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          errors='replace', timeout=timeout, **kw)


@contextlib.contextmanager
def file_lock(path):
    """An exclusive flock: serialises cache builds between concurrent test runs on one machine."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'a') as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


# ----------------------------------------------------------------------------- Jena
class JenaServer:
    """One JVM for the whole session running Jena's own command classes (tests/jena/JenaServer.java):
    started on the first request, stopped by the `jena` fixture at the session's end (or when the
    session dies: the JVM ends at the end of its stdin). A request is one JSON line, its reply one
    JSON line {"id", "exit", "seconds", "stderr"}. There is no fallback: a server that does not start,
    dies or does not answer fails the request, with the end of its log
    (<session tmp>/jena-server/server-N.log); the next request starts a new one."""

    SOURCE = os.path.join(TESTS, 'jena', 'JenaServer.java')

    def __init__(self, home, env, logdir):
        self.home, self.env, self.logdir = home, env, logdir
        self.proc, self.log_path, self.started, self.requests = None, None, 0, 0
        self._buf = b''

    def _log_tail(self, n=6000):
        try:
            with open(self.log_path, 'rb') as f:
                f.seek(0, os.SEEK_END)
                f.seek(max(0, f.tell() - n))
                return f.read().decode('utf-8', 'replace')
        except OSError as e:
            return '(no log: %s)' % e

    def _start(self):
        os.makedirs(self.logdir, exist_ok=True)
        self.started += 1
        self.log_path = os.path.join(self.logdir, 'server-%d.log' % self.started)
        argv = (['java'] + shlex.split(self.env.get('JVM_ARGS', '')) +
                ['-Dlog4j.configurationFile=file:' + os.path.join(self.home, 'log4j2.properties'),
                 '-cp', os.path.join(self.home, 'lib', '*'), self.SOURCE])
        with open(self.log_path, 'wb') as log:
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                                         env=self.env, start_new_session=True)
        self._buf = b''
        line = self._read_line(180)
        if line is None or not json.loads(line).get('ready'):
            why = self._gone()
            raise AssertionError('the Jena server (%s) did not start (%s); %s ends:\n%s' % (
                ' '.join(argv), why, self.log_path, self._log_tail()))

    def _read_line(self, timeout):
        """The next line from the server, or None if it ended or said nothing for `timeout` s."""
        import selectors
        deadline = time.time() + timeout
        fd = self.proc.stdout.fileno()
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while b'\n' not in self._buf:
                left = deadline - time.time()
                if left <= 0 or not sel.select(left):
                    return None
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    return None
                self._buf += chunk
        line, self._buf = self._buf.split(b'\n', 1)
        return line.decode('utf-8')

    def _gone(self):
        """Why no answer came; the server is stopped either way."""
        rc = self.proc.poll() if self.proc else None
        why = 'it exited with status %s' % rc if rc is not None else 'no answer in time'
        self.stop(kill=rc is None)
        return why

    def request(self, req, timeout=3600):
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        self.requests += 1
        req = dict(req, id=str(self.requests))
        try:
            try:
                self.proc.stdin.write(json.dumps(req).encode('utf-8') + b'\n')
                self.proc.stdin.flush()
            except BrokenPipeError:
                pass
            line = self._read_line(timeout)
        except BaseException:
            self.stop(kill=True)    # interrupted (e.g. pytest's timeout): its reply must not answer the next request
            raise
        if line is None:
            log = self.log_path
            why = self._gone()
            raise AssertionError('the Jena server failed on %s (%s); %s ends:\n%s' % (
                json.dumps(req)[:2000], why, log, self._log_tail()))
        reply = json.loads(line)
        if reply.get('id') != req['id']:
            self.stop(kill=True)
            raise AssertionError('the Jena server answered request %r to request %r' % (reply.get('id'), req['id']))
        return reply

    def stop(self, kill=False):
        p, self.proc = self.proc, None
        if p is None:
            return
        if kill:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            p.stdin.close()
        try:
            p.wait(30)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
            p.wait(30)
        with contextlib.suppress(OSError):
            p.stdout.close()


class Jena:
    def __init__(self, home, fuseki_jar, workdir):
        self.home = home
        self.fuseki_jar = fuseki_jar
        self.env = dict(os.environ, JENA_HOME=home,
                        JVM_ARGS=os.environ.get('RDF_BULKLOAD_JVM_ARGS', '-Xmx2G'))
        self.refs = os.environ.get('RDF_BULKLOAD_JENA_REFS') or os.path.join(CACHE, 'jena-refs', 'jena-%s' % JENA_VERSION)
        self.workdir = workdir
        self.server = JenaServer(home, self.env, os.path.join(workdir, 'jena-server'))

    def close(self):
        self.server.stop()

    def cmd(self, name, *args, timeout=1800, check=True):
        """bin/<name> in a JVM of its own (for what must be the command line itself, e.g. how
        Jena fails); everything else goes to run_class."""
        r = run([os.path.join(self.home, 'bin', name)] + list(args), env=self.env, timeout=timeout)
        if check and r.returncode != 0:
            raise AssertionError('%s %s failed (%d):\n%s' % (name, ' '.join(args), r.returncode, r.stderr[-4000:]))
        return r

    def run_class(self, cls, *args, out=None, timeout=3600, check=True):
        """Jena's command class `cls` (what a bin/ script runs: tdb2.tdbdump, tdb2.tdbquery,
        tdb2.tdbloader, tdb2.tdbstats, riotcmd.riot) with `args`, in the session's Jena server.
        Its stdout goes to the file `out` (then .stdout is None), else it is returned as text as
        subprocess gives it (.stdout). A CompletedProcess: returncode is the script's exit status."""
        import tempfile
        with tempfile.TemporaryDirectory(prefix='jena-out-') as d:
            path = out or os.path.join(d, 'stdout')
            r = self.server.request({'cmd': 'run', 'class': cls, 'args': [str(a) for a in args], 'out': path},
                                    timeout=timeout)
            stdout = None
            if out is None:
                with open(path, encoding='utf-8', errors='replace') as f:
                    stdout = f.read()
        if check and r['exit'] != 0:
            raise AssertionError('%s %s failed (%d):\n%s' % (cls, ' '.join(map(str, args)), r['exit'], r['stderr'][-4000:]))
        return subprocess.CompletedProcess([cls] + list(args), r['exit'], stdout, r['stderr'])

    def xloader(self, loc, tmpdir, files, timeout=3600, check=True):
        """bin/tdb2.xloader --loc loc --tmpdir tmpdir files..., its steps in the Jena server (same
        classes, arguments and order; --threads 2, the script's default)."""
        r = self.server.request({'cmd': 'xloader', 'loc': str(loc), 'tmpdir': str(tmpdir), 'threads': '2',
                                 'files': [str(f) for f in files]}, timeout=timeout)
        if check and r['exit'] != 0:
            raise AssertionError('tdb2.xloader --loc %s %s failed (%d):\n%s' % (
                loc, ' '.join(map(str, files)), r['exit'], r['stderr'][-4000:]))
        return subprocess.CompletedProcess(['tdb2.xloader', str(loc)] + [str(f) for f in files], r['exit'], None, r['stderr'])

    def tdbloader(self, loc, files, timeout=3600, check=True):
        return self.run_class('tdb2.tdbloader', '--loc', loc, *files, timeout=timeout, check=check)

    def tdbdump(self, db):
        return self.run_class('tdb2.tdbdump', '--loc', db).stdout

    def tdbquery(self, db, query, results='tsv'):
        return self.tdbquery_many(db, [(query, results)])[0]

    def tdbquery_many(self, db, items):
        """Answers of Jena's tdb2.tdbquery for [(query, results format)] on db (in the Jena server)."""
        import tempfile
        res = []
        with tempfile.TemporaryDirectory(prefix='querymany-') as d:
            for k, (q, fmt) in enumerate(items):
                qf = os.path.join(d, '%d.rq' % k)
                with open(qf, 'w', encoding='utf-8') as f:
                    f.write(q)
                res.append(self.run_class('tdb2.tdbquery', '--loc', db, '--results=' + fmt, '--query', qf).stdout)
        return res

    # -- xloader references, cached by (Jena version, input digests)
    def ref_key(self, files):
        h = hashlib.sha256(('xloader %s\n' % JENA_VERSION).encode())
        for f in files:
            h.update(('%s %s\n' % (os.path.basename(f), sha256_file(f))).encode())
        return h.hexdigest()[:24]

    def xloader_ref(self, files):
        """A Reference: xloader's DB for `files` (in this order) and its tdbdump, built once
        and kept under $RDF_BULKLOAD_CACHE/jena-refs/jena-5.6.0/<key>/."""
        key = self.ref_key(files)
        final = os.path.join(self.refs, key)
        with file_lock(final + '.lock'):
            if not os.path.exists(os.path.join(final, 'complete')):
                tmp = final + '.tmp'
                shutil.rmtree(tmp, ignore_errors=True)
                os.makedirs(os.path.join(tmp, 'work'))
                t0 = time.time()
                self.xloader(os.path.join(tmp, 'db'), os.path.join(tmp, 'work'), files, timeout=3600)
                shutil.rmtree(os.path.join(tmp, 'work'))
                for junk in ('triples.tmp.gz', 'quads.tmp.gz', 'load.json', 'tdb.lock'):
                    with contextlib.suppress(FileNotFoundError):
                        os.remove(os.path.join(tmp, 'db', junk))
                with open(os.path.join(tmp, 'dump.nq'), 'w') as f:
                    f.write(self.tdbdump(os.path.join(tmp, 'db')))
                with open(os.path.join(tmp, 'inputs.json'), 'w') as f:
                    json.dump({'jena': JENA_VERSION, 'files': [os.path.abspath(x) for x in files],
                               'seconds': round(time.time() - t0, 1)}, f)
                open(os.path.join(tmp, 'complete'), 'w').close()
                shutil.rmtree(final, ignore_errors=True)
                os.rename(tmp, final)
        return Reference(self, final)


    # -- xloader 5.6.0 drops the default-graph statements of N-Quads/TriG input (it reads such
    # files as quads only and leaves quads whose graph is the default graph out of every index;
    # statements from N-Triples/Turtle files are kept). Jena's meaning -- and tdbloader's -- is
    # that they belong in the triple table, which is what our loader must do. To keep xloader as
    # the oracle for them, each quad-syntax file is also written out by Jena's own parser
    # (riot --output=nq) in two derived forms:
    #   marker: default-graph statements moved into the named graph <MARKER_GRAPH> (one file,
    #           so blank-node scope is kept: used for tdbdump comparison, isomorphic);
    #   split:  default-graph statements as an N-Triples file + the rest as N-Quads (used as the
    #           SPARQL reference; a blank node shared between the two parts becomes two).
    def quad_parts(self, f):
        """For a quad-syntax file with default-graph statements: {'marker': path, 'default': path,
        'named': path}; None for other files. Cached by the file's digest."""
        base = os.path.basename(f)
        for ext in ('.gz', '.bz2', '.zst', '.zstd'):
            if base.endswith(ext):
                base = base[:-len(ext)]
        if not base.endswith(('.nq', '.trig', '.nquads')):
            return None
        d = os.path.join(self.refs, 'parts-%s' % self.ref_key([f]))
        with file_lock(d + '.lock'):
            if not os.path.exists(os.path.join(d, 'complete')):
                tmp = d + '.tmp'
                shutil.rmtree(tmp, ignore_errors=True)
                os.makedirs(tmp)
                nq = os.path.join(tmp, 'riot.nq')
                self.run_class('riotcmd.riot', '--nocheck', '--output=nq', f, out=nq)
                n_default = 0
                with open(nq, encoding='utf-8') as src, \
                        open(os.path.join(tmp, 'marker.nq'), 'w', encoding='utf-8') as mk, \
                        open(os.path.join(tmp, 'default.nt'), 'w', encoding='utf-8') as dn, \
                        open(os.path.join(tmp, 'named.nq'), 'w', encoding='utf-8') as nn:
                    for line in src:
                        q = rdfcanon.parse_line(line)
                        if q is None:
                            continue
                        if q[0] is None:
                            n_default += 1
                            body = _strip_default_graph(line)
                            dn.write(body + ' .\n')
                            mk.write('%s <%s> .\n' % (body, MARKER_GRAPH))
                        else:
                            nn.write(line)
                            mk.write(line)
                os.remove(nq)
                with open(os.path.join(tmp, 'default-statements'), 'w') as fh:
                    fh.write(str(n_default))
                open(os.path.join(tmp, 'complete'), 'w').close()
                shutil.rmtree(d, ignore_errors=True)
                os.rename(tmp, d)
        if open(os.path.join(d, 'default-statements')).read().strip() == '0':
            return None
        return {k: os.path.join(d, v) for k, v in
                (('marker', 'marker.nq'), ('default', 'default.nt'), ('named', 'named.nq'))}

    def marker_ref(self, files):
        """xloader reference in which quad-syntax default-graph statements sit in MARKER_GRAPH;
        None when no input has such statements (then xloader's own reference is complete)."""
        parts = [self.quad_parts(f) for f in files]
        if not any(parts):
            return None
        return self.xloader_ref([p['marker'] if p else f for f, p in zip(files, parts)])

    def split_ref(self, files):
        """xloader reference holding everything the input means (for SPARQL answers)."""
        parts = [self.quad_parts(f) for f in files]
        if not any(parts):
            return self.xloader_ref(files)
        out = []
        for f, p in zip(files, parts):
            out += [p['default'], p['named']] if p else [f]
        return self.xloader_ref(out)


MARKER_GRAPH = 'urn:x-rdf-bulkload-test:default-graph'
_DG_SUFFIX = re.compile(r'\s*(<urn:x-arq:DefaultGraph(?:Node)?>)?\s*\.\s*$')


def _strip_default_graph(line):
    """An N-Quads default-graph line without its final ' .' (and without a DefaultGraph IRI)."""
    return _DG_SUFFIX.sub('', line.rstrip('\n'))


def marker_dump_to_default(text):
    """Move MARKER_GRAPH statements of a tdbdump back into the default graph."""
    suffix = ' <%s> .' % MARKER_GRAPH
    return '\n'.join(l[:-len(suffix)] + ' .' if l.endswith(suffix) else l for l in text.split('\n') if l) + '\n'


class Reference:
    """A cached xloader database. Query answers are cached beside it (keyed by query text), and
    the DB itself is only opened under the entry's lock (Jena locks a DB per process)."""

    def __init__(self, jena, path):
        self.jena, self.path = jena, path
        self.db = os.path.join(path, 'db')

    def dump(self):
        with open(os.path.join(self.path, 'dump.nq'), encoding='utf-8') as f:
            return f.read()

    def cached(self, kind, text, compute):
        p = self._answer_path(kind, text)
        with file_lock(self.path + '.lock'):
            if not os.path.exists(p):
                os.makedirs(os.path.dirname(p), exist_ok=True)
                out = compute(self.db)
                with open(p + '.tmp', 'w', encoding='utf-8') as f:
                    f.write(out)
                os.rename(p + '.tmp', p)
            with open(p, encoding='utf-8') as f:
                return f.read()

    def tdbquery(self, query, results='tsv'):
        return self.cached('tdbquery-' + results, query, lambda db: self.jena.tdbquery(db, query, results))

    def _answer_path(self, kind, text):
        key = hashlib.sha256(('%s\n%s' % (kind, text)).encode()).hexdigest()[:24]
        return os.path.join(self.path, 'answers', '%s-%s' % (kind, key))

    def tdbquery_many(self, items):
        """Cached tdbquery answers for [(query, format)]; the missing ones in one JVM."""
        paths = [self._answer_path('tdbquery-' + fmt, q) for q, fmt in items]
        missing = [(it, p) for it, p in zip(items, paths) if not os.path.exists(p)]
        if missing:
            with file_lock(self.path + '.lock'):
                missing = [(it, p) for it, p in missing if not os.path.exists(p)]
                texts = self.jena.tdbquery_many(self.db, [it for it, _ in missing])
                for (_, p), text in zip(missing, texts):
                    os.makedirs(os.path.dirname(p), exist_ok=True)
                    with open(p + '.tmp', 'w', encoding='utf-8') as f:
                        f.write(text)
                    os.rename(p + '.tmp', p)
        out = []
        for p in paths:
            with open(p, encoding='utf-8') as f:
                out.append(f.read())
        return out


@pytest.fixture(scope='session')
def jena(tmp_path_factory):
    home = os.environ.get('JENA_HOME') or os.path.join(CACHE, 'jena-%s' % JENA_VERSION, 'apache-jena-%s' % JENA_VERSION)
    jar = os.environ.get('RDF_BULKLOAD_FUSEKI_JAR') or os.path.join(
        os.path.dirname(home), 'jena-fuseki-server-%s.jar' % JENA_VERSION)
    if not os.path.exists(os.path.join(home, 'bin', 'tdb2.xloader')) or not os.path.exists(jar):
        r = run(['bash', os.path.join(ROOT, 'hack', 'install-jena.sh')])
        assert r.returncode == 0, 'hack/install-jena.sh failed:\n' + r.stderr
    j = Jena(home, jar, str(tmp_path_factory.mktemp('jena')))
    try:
        yield j
    finally:
        j.close()


# ----------------------------------------------------------------------------- Jena 6
JENA6_VERSION = '6.2.0'
# Where a Java 21+ runtime is looked for (Jena 6 needs one; the machines and CI have Temurin 25).
JAVA21_CANDIDATES = ('/usr/lib/jvm/temurin-25-jdk-amd64', '/usr/lib/jvm/temurin-21-jdk-amd64')


def java_feature_version(java_home):
    """The feature version (17, 21, 25...) of $java_home/bin/java, or None."""
    java = os.path.join(java_home, 'bin', 'java')
    if not os.access(java, os.X_OK):
        return None
    r = run([java, '-XshowSettings:properties', '-version'], timeout=120)
    m = re.search(r'java\.specification\.version = (\d+)', r.stderr)
    return int(m.group(1)) if m else None


def java21_home():
    """A Java 21+ home: $RDF_BULKLOAD_JAVA21_HOME, $JAVA_HOME, then JAVA21_CANDIDATES. Absent:
    skip, or fail under CI=true (CI installs Temurin 25)."""
    tried = []
    for home in (os.environ.get('RDF_BULKLOAD_JAVA21_HOME'), os.environ.get('JAVA_HOME')) + JAVA21_CANDIDATES:
        if not home or home in tried:
            continue
        tried.append(home)
        v = java_feature_version(home)
        if v is not None and v >= 21:
            return home
    msg = 'no Java 21+ runtime for Jena %s (tried %s; set RDF_BULKLOAD_JAVA21_HOME)' % (JENA6_VERSION, ', '.join(tried))
    if IN_CI:
        pytest.fail(msg + ' (CI=true: CI has Temurin 25)')
    pytest.skip(msg)


class Jena6:
    """Jena 6.2.0 (hack/install-jena.sh with JENA_VERSION=6.2.0) run with a Java 21+ runtime:
    only its bin/tdb2.xloader, one JVM per step as the script runs them."""

    def __init__(self, home, java_home):
        self.home, self.java_home = home, java_home
        self.env = dict(os.environ, JENA_HOME=home, JAVA_HOME=java_home,
                        JAVA=os.path.join(java_home, 'bin', 'java'),
                        PATH=os.path.join(java_home, 'bin') + os.pathsep + os.environ.get('PATH', ''),
                        JVM_ARGS=os.environ.get('RDF_BULKLOAD_JVM_ARGS', '-Xmx2G'))

    def xloader(self, loc, tmpdir, files, timeout=3600):
        os.makedirs(tmpdir, exist_ok=True)
        argv = [os.path.join(self.home, 'bin', 'tdb2.xloader'), '--loc', str(loc), '--tmpdir', str(tmpdir)]
        r = run(argv + [str(f) for f in files], env=self.env, timeout=timeout)
        assert r.returncode == 0, 'Jena %s tdb2.xloader failed (%d):\n%s' % (JENA6_VERSION, r.returncode, r.stderr[-4000:])
        for junk in ('triples.tmp.gz', 'quads.tmp.gz', 'load.json', 'tdb.lock'):
            with contextlib.suppress(FileNotFoundError):
                os.remove(os.path.join(str(loc), junk))
        return r


@pytest.fixture(scope='session')
def jena6():
    """Jena 6.2.0, installed like 5.6.0 (hack/install-jena.sh, JENA_VERSION=6.2.0) into
    $RDF_BULKLOAD_CACHE/jena-6.2.0, run with a Java 21+ runtime (java21_home)."""
    java_home = java21_home()
    home = os.path.join(CACHE, 'jena-%s' % JENA6_VERSION, 'apache-jena-%s' % JENA6_VERSION)
    if not os.path.exists(os.path.join(home, 'bin', 'tdb2.xloader')):
        env = dict(os.environ, JENA_VERSION=JENA6_VERSION,
                   PATH=os.path.join(java_home, 'bin') + os.pathsep + os.environ.get('PATH', ''))
        r = run(['bash', os.path.join(ROOT, 'hack', 'install-jena.sh')], env=env)
        assert r.returncode == 0, 'JENA_VERSION=%s hack/install-jena.sh failed:\n%s' % (JENA6_VERSION, r.stderr)
    return Jena6(home, java_home)


# ----------------------------------------------------------------------------- Fuseki
class Fuseki:
    def __init__(self, jena, db, workdir):
        self.jena, self.db, self.workdir = jena, db, workdir
        self.proc = None
        self.port = None

    def start(self, attempts=3):
        for _ in range(attempts):
            with socket.socket() as s:
                s.bind(('127.0.0.1', 0))
                self.port = s.getsockname()[1]
            self.log = open(os.path.join(self.workdir, 'fuseki-%d.log' % self.port), 'w+')
            self.proc = subprocess.Popen(
                ['java', '-Xmx1G', '-jar', self.jena.fuseki_jar, '--tdb2', '--loc', self.db,
                 '--localhost', '--port', str(self.port), '--ping', '/ds'],
                stdout=self.log, stderr=subprocess.STDOUT, cwd=self.workdir, start_new_session=True)
            if self._wait_ready():
                return self
            self.stop()
        raise AssertionError('Fuseki did not start; log:\n' + self._log_text())

    def _log_text(self):
        self.log.seek(0)
        return self.log.read()[-4000:]

    def _wait_ready(self, timeout=90):
        import requests
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                if requests.get('http://127.0.0.1:%d/$/ping' % self.port, timeout=2).ok:
                    return True
            except requests.RequestException:
                pass
            time.sleep(0.3)
        return False

    @property
    def endpoint(self):
        return 'http://127.0.0.1:%d/ds/sparql' % self.port

    def query(self, q, accept='application/sparql-results+json'):
        import requests
        r = requests.post(self.endpoint, data={'query': q}, headers={'Accept': accept}, timeout=300)
        assert r.status_code == 200, 'Fuseki %d: %s' % (r.status_code, r.text[:2000])
        return r.text

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(15)
        self.proc = None


@pytest.fixture
def fuseki(jena, tmp_path):
    """fuseki(db) starts a read-only Fuseki on a free loopback port serving db at /ds;
    every server started is stopped at teardown, whatever the test did."""
    servers = []

    def start(db):
        f = Fuseki(jena, db, str(tmp_path))
        servers.append(f)
        return f.start()
    try:
        yield start
    finally:
        for f in servers:
            f.stop()


# ----------------------------------------------------------------------------- the loader
class LoadResult:
    def __init__(self, db, proc, argv):
        self.db, self.returncode, self.stdout, self.stderr, self.argv = db, proc.returncode, proc.stdout, proc.stderr, argv

    def __repr__(self):
        return 'rdf-bulkload exit %d\n$ %s\nstderr:\n%s' % (self.returncode, ' '.join(self.argv), self.stderr[-3000:])


class Loader:
    def __init__(self, cmd, env=None):
        self.cmd = cmd
        self.env = env or {}

    def with_env(self, **env):
        """The same loader, run with these environment variables added."""
        return Loader(self.cmd, {**self.env, **env})

    def run(self, *args, timeout=1800, env=None):
        argv = self.cmd + [str(a) for a in args]
        if self.env:
            env = {**os.environ, **self.env, **(env or {})}
        return run(argv, timeout=timeout, env=env)

    def load(self, db, files, *opts, check=True, expect=EXIT_OK, timeout=1800):
        """`rdf-bulkload load --loc db [opts] files...`. On success runs the independent checker
        (suite c: shared/tools/tdb2-inspect.py --check) on the database, always."""
        argv = ['load', '--loc', str(db)] + [str(o) for o in opts] + [str(f) for f in files]
        p = self.run(*argv, timeout=timeout)
        r = LoadResult(str(db), p, self.cmd + argv)
        if expect is not None:
            assert r.returncode == expect, repr(r)
        if r.returncode == 0 and check:
            inspect_check(str(db))
        return r


def inspect_check(db):
    """tdb2-inspect.py DB --check must pass on every database the loader writes."""
    tool = os.path.join(SHARED, 'tools', 'tdb2-inspect.py')
    if not os.path.exists(tool):
        if IN_CI:
            pytest.fail('%s is absent (CI=true guarantees ../shared)' % tool)
        return False
    r = run([sys.executable, tool, db, '--check'], timeout=3600)
    assert r.returncode == 0 and '# check OK' in r.stderr, 'tdb2-inspect --check failed on %s:\n%s' % (db, r.stderr[-4000:])
    return True


@pytest.fixture(scope='session')
def loader():
    if os.environ.get('RDF_BULKLOAD_CMD'):
        return Loader(shlex.split(os.environ['RDF_BULKLOAD_CMD']))
    binary = os.environ.get('RDF_BULKLOAD') or os.path.join(ROOT, 'loader-image', 'target', 'release', 'rdf-bulkload')
    if not os.access(binary, os.X_OK):
        pytest.fail('loader binary %s not found: run `make loader` (or set RDF_BULKLOAD)' % binary)
    return Loader([binary])


@pytest.fixture(scope='session')
def session_tmp(tmp_path_factory):
    return tmp_path_factory.mktemp('session')


def dump_quads(text):
    return rdfcanon.read_quads(text, is_text=True)


def has_bnodes(quads):
    return any(t is not None and t[0] == 'bnode' for q in quads for t in q)


def assert_same_dump(expected_text, actual_text, what=''):
    """tdbdump outputs (both printed by Jena) hold the same quads; isomorphic if blank nodes occur.
    Compared as multisets: tdbdump can print one line twice (e.g. decimals 1.5 and 1.50 are
    different NodeIds that print alike), and that must agree too."""
    if '_:' not in expected_text and '_:' not in actual_text:
        e = collections.Counter(l for l in expected_text.split('\n') if l.strip())
        a = collections.Counter(l for l in actual_text.split('\n') if l.strip())
        if e != a:
            raise AssertionError('%s: tdbdump differs from xloader\'s: missing %d, unexpected %d\n%s' % (
                what, sum((e - a).values()), sum((a - e).values()),
                '\n'.join(['  - ' + x for x in sorted(e - a)[:15]] + ['  + ' + x for x in sorted(a - e)[:15]])))
        return
    exp, act = dump_quads(expected_text), dump_quads(actual_text)
    assert len(exp) == len(act), '%s: tdbdump printed %d quads, xloader %d' % (what, len(act), len(exp))
    e, a = rdfcanon.canonical(exp), rdfcanon.canonical(act)
    assert e == a, '%s: tdbdump not isomorphic to xloader\'s:\n%s' % (what, rdfcanon.diff(e, a))


# ----------------------------------------------------------------------------- shared builds
class Built:
    """Our database and xloader's references for the same inputs: `ref` (xloader on the files),
    `marker` (None, or the default-graph-preserving variant, see Jena.quad_parts) and `qref`
    (the reference for SPARQL answers)."""

    def __init__(self, jena, files, db, ref, marker, load):
        self.jena, self.files, self.db, self.ref, self.marker, self.load = jena, files, db, ref, marker, load
        self._qref = None

    @property
    def qref(self):
        if self._qref is None:      # built on first use: only the SPARQL suite needs it
            self._qref = self.jena.split_ref(self.files) if self.marker is not None else self.ref
        return self._qref


def build_pair(loader, jena, files, db):
    ref = jena.xloader_ref(files)
    marker = jena.marker_ref(files)
    load = loader.load(db, files)
    return Built(jena, files, str(db), ref, marker, load)


@pytest.fixture(scope='session')
def bsbm_nt(loader, jena, session_tmp):
    """bsbm-1m.nt.gz loaded by us and by xloader (once per session)."""
    f = shared_path('datasets', 'bsbm-1m.nt.gz')
    return build_pair(loader, jena, [f], session_tmp / 'bsbm-nt')


@pytest.fixture(scope='session')
def bsbm_nq(loader, jena, session_tmp):
    """bsbm-1m-ng.nq.gz loaded by us and by xloader (once per session)."""
    f = shared_path('datasets', 'bsbm-1m-ng.nq.gz')
    return build_pair(loader, jena, [f], session_tmp / 'bsbm-nq')


@pytest.fixture(scope='session')
def edge_all(loader, jena, session_tmp):
    """Every file of the edge corpus in one load."""
    files = sorted(os.path.join(EDGE, n) for n in os.listdir(EDGE))
    return build_pair(loader, jena, files, session_tmp / 'edge-all')


@pytest.fixture(scope='session')
def examples_pair(loader, jena, session_tmp):
    """The sample dump the repository ships (examples/), loaded by us and by xloader."""
    files = [os.path.join(ROOT, 'examples', n) for n in ('catalog.ttl.gz', 'catalog-graphs.nq.gz')]
    return build_pair(loader, jena, files, session_tmp / 'examples')

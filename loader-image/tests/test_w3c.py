"""Suite (d): the W3C RDF 1.1 test suites (../shared/datasets/w3c-rdf-tests/rdf11/), read from
each suite's manifest.ttl, one pytest case per manifest entry:

* positive syntax tests load (exit 0, and the database passes tdb2-inspect --check);
* negative syntax tests are rejected in strict mode: exit 3, a `FILE:LINE:COL: reason`
  position on stderr, and nothing left at the output path;
* evaluation tests load to exactly the expected triples/quads: Jena's `tdb2.tdbdump` of our
  database equals the expected .nt/.nq, isomorphic with blank nodes, literals compared the way
  TDB2 keeps them (value forms for inline datatypes, case-insensitive language tags).

Turtle/TriG evaluation inputs are loaded from a copy that starts with `@base <assumed test
base + file name>` (the manifests' mf:assumedTestBase), because the expected results resolve
relative IRIs against that base, while a loader resolves them against the file's own location.
"""
import os
import re
import subprocess

import pytest

import rdfcanon
from conftest import EXIT_BAD_INPUT, SHARED, TESTS, inspect_check, run, shared_path

W3C = os.path.join(SHARED, 'datasets', 'w3c-rdf-tests', 'rdf11')
SUITES = ('rdf-n-triples', 'rdf-n-quads', 'rdf-turtle', 'rdf-trig')
MF = 'http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#'
RDFT = 'http://www.w3.org/ns/rdftest#'


# Turtle/TriG files are cut into chunks parsed by the workers in parallel; a 1-byte chunk
# size cuts these small files after every statement (where a cut is allowed), so every case
# goes through the split and the state each chunk starts in.
@pytest.fixture(scope='session')
def loader(loader):
    return loader.with_env(RDF_BULKLOAD_TERSE_CHUNK_BYTES='1')


class Case:
    def __init__(self, suite, name, kind, action, result, base):
        self.suite, self.name, self.kind, self.action, self.result, self.base = suite, name, kind, action, result, base

    @property
    def id(self):
        return '%s/%s' % (self.suite, self.name)


def _file_path(iri):
    assert iri.startswith('file://'), iri
    from urllib.parse import unquote
    return unquote(iri[len('file://'):])


def read_manifests():
    """All cases of the four suites, in manifest order."""
    if not os.path.isdir(W3C):
        return []
    import rdflib
    from rdflib.collection import Collection
    cases = []
    for suite in SUITES:
        path = os.path.join(W3C, suite, 'manifest.ttl')
        g = rdflib.Graph()
        g.parse(path, format='turtle', publicID='file://' + os.path.abspath(path))
        man = next(g.subjects(rdflib.RDF.type, rdflib.URIRef(MF + 'Manifest')))
        base = g.value(man, rdflib.URIRef(MF + 'assumedTestBase'))
        for e in Collection(g, g.value(man, rdflib.URIRef(MF + 'entries'))):
            kind = str(g.value(e, rdflib.RDF.type))[len(RDFT):]
            name = str(g.value(e, rdflib.URIRef(MF + 'name')))
            action = _file_path(str(g.value(e, rdflib.URIRef(MF + 'action'))))
            res = g.value(e, rdflib.URIRef(MF + 'result'))
            cases.append(Case(suite, name, kind, action, _file_path(str(res)) if res else None,
                              str(base) if base else None))
    return cases


CASES = read_manifests()


def by_kind(suffix):
    return [pytest.param(c, id=c.id) for c in CASES if c.kind.endswith(suffix)]


def test_w3c_suites_present():
    """The suites are there (skipped outside CI when ../shared is absent) and were read."""
    shared_path('datasets', 'w3c-rdf-tests', 'rdf11')
    counts = {s: sum(1 for c in CASES if c.suite == s) for s in SUITES}
    assert all(counts.values()), counts
    kinds = {c.kind for c in CASES}
    assert {'TestTurtleEval', 'TestTrigEval', 'TestNTriplesNegativeSyntax', 'TestNQuadsPositiveSyntax'} <= kinds, kinds


@pytest.mark.parametrize('case', by_kind('PositiveSyntax'))
def test_positive_syntax_loads(case, loader, tmp_path):
    loader.load(tmp_path / 'db', [case.action])


POSITION = re.compile(r':(\d+):(\d+): \S')


@pytest.mark.parametrize('case', by_kind('NegativeSyntax'))
def test_negative_syntax_rejected_with_position(case, loader, tmp_path):
    db = tmp_path / 'db'
    r = loader.load(db, [case.action], expect=EXIT_BAD_INPUT)
    m = re.search(re.escape(case.action) + POSITION.pattern, r.stderr)
    assert m, 'no "%s:LINE:COL: reason" on stderr:\n%s' % (case.action, r.stderr[-2000:])
    nlines = max(1, open(case.action, 'rb').read().count(b'\n') + 1)
    assert 1 <= int(m.group(1)) <= nlines and int(m.group(2)) >= 1, m.group(0)
    assert not os.path.exists(db), 'a rejected load left %s behind' % db


# --------------------------------------------------------------------------- evaluation tests
def based_copy(case, workdir):
    """The evaluation input, preceded by `@base <assumed base + name>` for Turtle/TriG."""
    if case.suite not in ('rdf-turtle', 'rdf-trig') or not case.base:
        return case.action
    name = os.path.basename(case.action)
    out = os.path.join(workdir, name)
    with open(case.action, 'rb') as src, open(out, 'wb') as dst:
        dst.write(('@base <%s%s> .\n' % (case.base, name)).encode('utf-8'))
        dst.write(src.read())
    return out


@pytest.fixture(scope='session')
def eval_results(request, loader, jena, tmp_path_factory):
    """Loads every selected evaluation case with our loader, then dumps all the databases with
    Jena's tdb2.tdbdump in one JVM (tests/jena/DumpMany.java). {case id: (LoadResult, dump)}."""
    selected = [it.callspec.params['case'] for it in request.session.items
                if getattr(it, 'callspec', None) and it.originalname == 'test_evaluation_matches_expected']
    work = tmp_path_factory.mktemp('w3c-eval')
    results, pairs = {}, []
    for i, case in enumerate(selected):
        d = work / ('%04d' % i)
        d.mkdir()
        src = based_copy(case, str(d))
        r = loader.load(d / 'db', [src], expect=None, check=False)
        out = str(d / 'dump.nq')
        problem = None
        if r.returncode == 0:
            try:
                inspect_check(str(d / 'db'))     # before Jena opens (and grows) the files
            except AssertionError as e:
                problem = str(e)
            pairs += [str(d / 'db'), out]
        results[case.id] = (r, out, problem)
    for k in range(0, len(pairs), 200):     # one JVM per 100 databases (pairs)
        p = run(['java', '-Xmx1G', '-cp', os.path.join(jena.home, 'lib', '*'),
                 os.path.join(TESTS, 'jena', 'DumpMany.java')] + pairs[k:k + 200], timeout=1800)
        assert p.returncode == 0, 'DumpMany failed:\n' + p.stderr[-3000:]
    return results


@pytest.mark.parametrize('case', by_kind('Eval'))
def test_evaluation_matches_expected(case, eval_results):
    r, dump, problem = eval_results[case.id]
    assert r.returncode == 0, repr(r)
    assert problem is None, problem
    with open(dump, encoding='utf-8') as f:
        actual = rdfcanon.read_quads(f.read(), is_text=True)
    expected = rdfcanon.read_quads(case.result)
    e = rdfcanon.canonical(rdfcanon.normalise(expected))
    a = rdfcanon.canonical(rdfcanon.normalise(actual))
    assert e == a, '%s: tdbdump differs from %s\n%s' % (case.id, case.result, rdfcanon.diff(e, a))

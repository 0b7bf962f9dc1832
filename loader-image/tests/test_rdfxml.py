"""RDF/XML input against Jena 5.6.0 and the W3C RDF 1.1 RDF/XML test suite.

The suite is not in ../shared: it comes from the sdist of rdflib on PyPI (which ships it under
test/data/suites/w3c/rdf-xml/), downloaded once with pip into
$RDF_BULKLOAD_CACHE/rdflib-<version>/ and checked against its digest.

* negative syntax tests: strict load exits 3 with `FILE:LINE:COL: reason`, nothing left behind;
  in skip mode the file is one reject (9 of them Jena's loaders accept with a warning: those
  cases pass our checks, then are reported as skipped with Jena's verdict);
* evaluation tests: Jena's tdbdump of our database is isomorphic to the expected N-Triples and
  to what Jena's own RDF/XML parser gives for the same file and base (tests/jena/ParseMany.java);
* all evaluation inputs in one load, against Jena's `tdb2.tdbloader` of the same files (each
  file's IRIs resolved against its own `file://` URL, as both loaders do by default).

Where Jena itself disagrees with the suite, the case compares us with Jena only, and says so
(pytest's skip reasons list them: `-rs`).
"""
import json
import os
import re
import shutil
import sys
import tarfile
import tempfile

import pytest

import rdfcanon
from conftest import CACHE, EXIT_BAD_INPUT, IN_CI, TESTS, file_lock, inspect_check, run, sha256_file

RDFLIB_VERSION = '7.6.0'
RDFLIB_SDIST_SHA256 = '6c831288d5e4a5a7ece85d0ccde9877d512a3d0f02d7c06455d00d6d0ea379df'
SUITE_IN_SDIST = 'rdflib-%s/test/data/suites/w3c/rdf-xml/' % RDFLIB_VERSION
TEST_BASE = 'http://www.w3.org/2013/RDFXMLTests/'   # the suite's expected results use this base
MF = 'http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#'
RDFT = 'http://www.w3.org/ns/rdftest#'
JENA_VERSION = '5.6.0'


class Unreachable(Exception):
    """PyPI could not be reached."""


def suite_dir():
    """The suite, fetched from PyPI on first use."""
    home = os.path.join(CACHE, 'rdflib-%s' % RDFLIB_VERSION)
    final = os.path.join(home, 'rdf-xml')
    os.makedirs(home, exist_ok=True)
    with file_lock(final + '.lock'):
        if os.path.exists(os.path.join(final, 'manifest.ttl')):
            return final
        with tempfile.TemporaryDirectory(dir=home) as tmp:
            r = run([sys.executable, '-m', 'pip', 'download', '--no-deps', '--no-binary', ':all:',
                     'rdflib==%s' % RDFLIB_VERSION, '-d', tmp], timeout=900)
            sdist = os.path.join(tmp, 'rdflib-%s.tar.gz' % RDFLIB_VERSION)
            if r.returncode != 0 or not os.path.exists(sdist):
                raise Unreachable('cannot download the rdflib %s sdist from PyPI:\n%s' % (RDFLIB_VERSION, r.stderr[-2000:]))
            assert sha256_file(sdist) == RDFLIB_SDIST_SHA256, 'rdflib sdist digest differs'
            out = os.path.join(tmp, 'x')
            with tarfile.open(sdist) as t:
                members = [m for m in t.getmembers() if m.name.startswith(SUITE_IN_SDIST) and m.isfile()]
                t.extractall(out, members=members, filter='data')
            shutil.rmtree(final, ignore_errors=True)
            os.rename(os.path.join(out, SUITE_IN_SDIST), final)
    return final


class Case:
    def __init__(self, name, kind, action, result, root):
        self.name, self.kind, self.action, self.result = name, kind, action, result
        self.base = TEST_BASE + os.path.relpath(action, root)

    @property
    def id(self):
        return self.name


def read_manifest(root):
    import rdflib
    from rdflib.collection import Collection
    path = os.path.join(root, 'manifest.ttl')
    g = rdflib.Graph()
    g.parse(path, format='turtle', publicID='file://' + path)
    man = next(g.subjects(rdflib.RDF.type, rdflib.URIRef(MF + 'Manifest')))
    cases = []
    for e in Collection(g, g.value(man, rdflib.URIRef(MF + 'entries'))):
        kind = str(g.value(e, rdflib.RDF.type))[len(RDFT):]
        res = g.value(e, rdflib.URIRef(MF + 'result'))
        cases.append(Case(str(g.value(e, rdflib.URIRef(MF + 'name'))), kind,
                          str(g.value(e, rdflib.URIRef(MF + 'action')))[len('file://'):],
                          str(res)[len('file://'):] if res else None, root))
    return cases


def fetched_suite_dir():
    """suite_dir(), or a skip outside CI when PyPI cannot be reached (a failure in CI)."""
    try:
        return suite_dir()
    except Unreachable as e:
        if IN_CI:
            pytest.fail(str(e))
        pytest.skip(str(e))


@pytest.fixture(scope='session')
def suite():
    root = fetched_suite_dir()
    cases = read_manifest(root)
    kinds = {c.kind for c in cases}
    assert {'TestXMLEval', 'TestXMLNegativeSyntax'} <= kinds and len(cases) > 150, (kinds, len(cases))
    return {c.name: c for c in cases}


def _names(kind):
    """Case names for parametrisation: the suite is fetched while tests are collected (none
    when PyPI cannot be reached; then test_suite_fetched says why)."""
    try:
        root = suite_dir()
    except Unreachable:
        return []
    return [c.name for c in read_manifest(root) if c.kind == kind]


def test_suite_fetched(suite):
    """The suite is there (fetched from PyPI) and holds both kinds of tests."""
    assert sum(c.kind == 'TestXMLEval' for c in suite.values()) >= 100


@pytest.fixture(scope='session')
def jena_parses(suite, jena, session_tmp):
    """What Jena's RDF/XML parser gives for every case, with the case's base: {name: (nt text
    or None, error or None)}. Cached beside the suite per Jena version."""
    out = os.path.join(CACHE, 'rdflib-%s' % RDFLIB_VERSION, 'jena-%s-parses' % JENA_VERSION)
    with file_lock(out + '.lock'):
        if not os.path.exists(os.path.join(out, 'complete')):
            tmp = out + '.tmp'
            shutil.rmtree(tmp, ignore_errors=True)
            os.makedirs(tmp)
            argv = []
            for c in suite.values():
                argv += [c.action, c.base, os.path.join(tmp, c.name + '.nt')]
            p = run(['java', '-Xmx1G', '-cp', os.path.join(jena.home, 'lib', '*'),
                     os.path.join(TESTS, 'jena', 'ParseMany.java')] + argv, timeout=1800)
            assert p.returncode == 0, 'ParseMany failed:\n' + p.stderr[-3000:]
            open(os.path.join(tmp, 'complete'), 'w').close()
            shutil.rmtree(out, ignore_errors=True)
            os.rename(tmp, out)
    res = {}
    for name in suite:
        nt, err = os.path.join(out, name + '.nt'), os.path.join(out, name + '.nt.error')
        if os.path.exists(err):
            res[name] = (None, open(err, encoding='utf-8').read().strip())
        else:
            res[name] = (open(nt, encoding='utf-8').read(), None)
    return res


POSITION = r':(\d+):(\d+): \S'


@pytest.mark.parametrize('name', _names('TestXMLNegativeSyntax'))
def test_negative_syntax_rejected_with_position(name, suite, jena_parses, loader, tmp_path):
    case = suite[name]
    db = tmp_path / 'db'
    r = loader.load(db, [case.action], expect=EXIT_BAD_INPUT)
    m = re.search(re.escape(case.action) + POSITION, r.stderr)
    assert m, 'no "%s:LINE:COL: reason" on stderr:\n%s' % (case.action, r.stderr[-2000:])
    nlines = open(case.action, 'rb').read().count(b'\n') + 1
    assert 1 <= int(m.group(1)) <= nlines and int(m.group(2)) >= 1, m.group(0)
    assert not os.path.exists(db), 'a rejected load left %s behind' % db
    # Skip mode: the file is one reject at the same position, and the load succeeds.
    rejects = tmp_path / 'rejects.jsonl'
    r = loader.load(tmp_path / 'db2', [case.action], '--on-error', 'skip', '--rejects', rejects)
    lines = open(rejects, encoding='utf-8').read().splitlines()
    assert len(lines) == 1 and '"line":%s,' % m.group(1) in lines[0] and 'cannot resume' in lines[0], lines
    nt, err = jena_parses[name]
    if err is None:
        # We follow the suite; Jena's loaders only warn (rdf:ID/rdf:nodeID values that are not
        # XML names, a repeated rdf:ID) and load the file.
        pytest.skip('%s: refused as the suite requires, but Jena 5.6.0 accepts it (%d triples)'
                    % (name, nt.count('\n')))


@pytest.fixture(scope='session')
def our_dumps(suite, loader, jena, tmp_path_factory):
    """Every evaluation case loaded by us with the case's base, dumped by Jena's tdbdump (one
    JVM for all): {name: (LoadResult, dump path, checker problem)}."""
    work = tmp_path_factory.mktemp('rdfxml-eval')
    results, pairs = {}, []
    for i, case in enumerate(c for c in suite.values() if c.kind == 'TestXMLEval'):
        d = work / ('%04d' % i)
        d.mkdir()
        r = loader.load(d / 'db', [case.action], '--base', case.base, expect=None, check=False)
        problem = None
        if r.returncode == 0:
            try:
                inspect_check(str(d / 'db'))
            except AssertionError as e:
                problem = str(e)
            pairs += [str(d / 'db'), str(d / 'dump.nq')]
        results[case.name] = (r, str(d / 'dump.nq'), problem)
    for k in range(0, len(pairs), 200):
        p = run(['java', '-Xmx1G', '-cp', os.path.join(jena.home, 'lib', '*'),
                 os.path.join(TESTS, 'jena', 'DumpMany.java')] + pairs[k:k + 200], timeout=1800)
        assert p.returncode == 0, 'DumpMany failed:\n' + p.stderr[-3000:]
    return results


def canonical_text(text):
    return rdfcanon.canonical(rdfcanon.normalise(rdfcanon.read_quads(text, is_text=True)))


@pytest.mark.parametrize('name', _names('TestXMLEval'))
def test_evaluation_matches_expected_and_jena(name, suite, jena_parses, our_dumps):
    case = suite[name]
    r, dump, problem = our_dumps[name]
    jena_nt, jena_err = jena_parses[name]
    assert r.returncode == 0, repr(r)
    assert problem is None, problem
    ours = canonical_text(open(dump, encoding='utf-8').read())
    expected = canonical_text(open(case.result, encoding='utf-8').read())
    if jena_err is None:
        jena = canonical_text(jena_nt)
        assert ours == jena, 'not what Jena parses:\n' + rdfcanon.diff(jena, ours)
        if jena != expected:
            pytest.skip('%s: Jena 5.6.0 differs from the suite\'s expected triples (ours equal Jena\'s):\n%s'
                        % (name, rdfcanon.diff(expected, jena, limit=4)))
    else:
        assert ours == expected, rdfcanon.diff(expected, ours)
        pytest.skip('%s: Jena 5.6.0 refuses it (%s); ours equal the expected triples' % (name, jena_err[:200]))
    assert ours == expected, rdfcanon.diff(expected, ours)


def test_all_evaluation_inputs_as_tdbloader_loads_them(suite, jena_parses, loader, jena, tmp_path):
    """One load of every evaluation input Jena parses, by us and by `tdb2.tdbloader`, each file
    against its own file:// URL: tdbdump of both isomorphic."""
    files = sorted(c.action for c in suite.values() if c.kind == 'TestXMLEval' and jena_parses[c.name][1] is None)
    assert len(files) >= 100, len(files)
    loader.load(tmp_path / 'ours', files)
    jena.tdbloader(tmp_path / 'jena', files, timeout=1800)
    ours, theirs = jena.tdbdump(str(tmp_path / 'ours')), jena.tdbdump(str(tmp_path / 'jena'))
    a, e = canonical_text(ours), canonical_text(theirs)
    assert a == e, rdfcanon.diff(e, a)


# --------------------------------------------------------------------------- our own inputs
RDF_HEAD = ('<?xml version="1.0" encoding="UTF-8"?>\n'
            '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"\n'
            '         xmlns:ex="http://example.org/ns#" xml:base="http://example.org/base/">\n')
RDF_TAIL = '</rdf:RDF>\n'


def description(i):
    """A node element with typed, language-tagged and XML literals and relative IRIs (resolved
    against xml:base); no blank nodes, so databases compare record for record."""
    return ('  <ex:Thing rdf:about="item/%d">\n'
            '    <ex:label xml:lang="EN-gb">Item %d &amp; co\r\n  second line</ex:label>\n'
            '    <ex:n rdf:datatype="http://www.w3.org/2001/XMLSchema#decimal">%d.50</ex:n>\n'
            '    <ex:next rdf:resource="item/%d"/>\n'
            '    <ex:note rdf:parseType="Literal"><b xmlns="http://www.w3.org/1999/xhtml" class="c">%d</b> &lt;</ex:note>\n'
            '  </ex:Thing>\n' % (i, i, i, i + 1, i))


def rdfxml_doc(n, start=0):
    return RDF_HEAD + ''.join(description(i) for i in range(start, start + n)) + RDF_TAIL


def _xz_streams(*parts):
    import lzma
    return b''.join(lzma.compress(p, format=lzma.FORMAT_XZ) for p in parts)


def test_compressed_and_sniffed_inputs_load_as_jena_loads_them(loader, jena, tmp_path):
    """The same RDF/XML and N-Triples under every compression (xz as two concatenated streams),
    and under names that say nothing (syntax sniffed): each load equals Jena's tdbloader of the
    plain files, record for record as tdbdump prints them."""
    import bz2
    import gzip
    import lzma
    import zstandard
    doc = rdfxml_doc(300).encode()
    nt = ''.join('<http://example.org/s%d> <http://example.org/p> "v%d"@de .\n' % (i, i) for i in range(3000)).encode()
    plain = tmp_path / 'plain'
    plain.mkdir()
    (plain / 'doc.rdf').write_bytes(doc)
    (plain / 'doc.nt').write_bytes(nt)
    jena.tdbloader(tmp_path / 'jena', [plain / 'doc.rdf', plain / 'doc.nt'])
    expected = jena.tdbdump(str(tmp_path / 'jena'))
    half = nt.index(b'\n', len(nt) // 2) + 1
    variants = {
        'gzip': {'doc.rdf.gz': gzip.compress(doc), 'doc.nt.gz': gzip.compress(nt)},
        'bzip2': {'doc.owl.bz2': bz2.compress(doc), 'doc.nt.bz2': bz2.compress(nt)},
        'zstd': {'doc.xml.zst': zstandard.ZstdCompressor().compress(doc), 'doc.nt.zst': zstandard.ZstdCompressor().compress(nt)},
        'xz': {'doc.rdf.xz': _xz_streams(doc[:len(doc) // 2], doc[len(doc) // 2:]),
               'doc.nt.xz': _xz_streams(nt[:half], nt[half:])},
        'lzma': {'doc.rdf.lzma': lzma.compress(doc, format=lzma.FORMAT_ALONE), 'doc.nt.lzma': lzma.compress(nt, format=lzma.FORMAT_ALONE)},
        'sniffed': {'doc-a': doc, 'doc-b.xz': _xz_streams(doc), 'doc-c': nt},
    }
    for name, files in variants.items():
        d = tmp_path / name
        d.mkdir()
        for f, data in files.items():
            (d / f).write_bytes(data)
        loader.load(tmp_path / ('db-' + name), [d / f for f in files])
        actual = jena.tdbdump(str(tmp_path / ('db-' + name)))
        assert sorted(actual.splitlines()) == sorted(expected.splitlines()), name
    plan = loader.run('plan', '--json', '--loc', tmp_path / 'x', *[tmp_path / 'sniffed' / f for f in variants['sniffed']])
    assert [(i['syntax'], i['compression']) for i in json.loads(plan.stdout)['inputs']] == [
        ('rdf/xml', 'none'), ('rdf/xml', 'xz'), ('n-quads', 'none')], plan.stdout


def test_skip_mode_rejects_the_rest_of_a_broken_file_and_keeps_what_came_before(loader, jena, tmp_path):
    """A syntax error ends an RDF/XML file: strict exits 3 at its line; skip writes one reject
    and keeps exactly the triples before the error (Jena's load of the file cut there), and the
    other inputs load whole."""
    good_part = rdfxml_doc(40)[:-len(RDF_TAIL)]
    bad = '  <ex:Thing rdf:about="item/x">\n    <ex:next rdf:resource="a b"/>\n  </ex:Thing>\n'
    broken = tmp_path / 'broken.rdf'
    broken.write_text(good_part + bad + ''.join(description(i) for i in range(40, 50)) + RDF_TAIL)
    other = tmp_path / 'other.rdf'
    other.write_text(rdfxml_doc(5, start=100))
    cut = tmp_path / 'cut.rdf'
    cut.write_text(good_part + '  <ex:Thing rdf:about="item/x"/>\n' + RDF_TAIL)
    error_line = good_part.count('\n') + 2

    r = loader.load(tmp_path / 'strict', [broken, other], expect=EXIT_BAD_INPUT)
    assert '%s:%d:5: ' % (broken, error_line) in r.stderr, r.stderr[-2000:]

    rejects = tmp_path / 'rejects.jsonl'
    loader.load(tmp_path / 'skip', [broken, other], '--on-error', 'skip', '--rejects', rejects)
    rows = [json.loads(l) for l in open(rejects, encoding='utf-8')]
    assert len(rows) == 1 and rows[0]['file'] == str(broken) and rows[0]['line'] == error_line, rows
    assert 'nothing after it in this file is read' in rows[0]['reason'], rows[0]
    assert rows[0]['text'] == '    <ex:next rdf:resource="a b"/>', rows[0]

    jena.tdbloader(tmp_path / 'jena', [cut, other])
    expected = jena.tdbdump(str(tmp_path / 'jena'))
    actual = jena.tdbdump(str(tmp_path / 'skip'))
    assert sorted(actual.splitlines()) == sorted(expected.splitlines())


def test_record_identical_to_xloader(loader, jena, tmp_path):
    """Blank-node-free RDF/XML: node table, every index and the prefix table record for record
    as `tdb2.xloader` writes them. Inputs: a real ontology, the OGC GeoSPARQL 1.0 vocabulary as
    Fuseki's jar from Maven Central ships it (xml:base, rdf:ID, rdf:about="", datatypes,
    language tags), and our own document (XML literals, CRLF in literals, relative IRIs)."""
    import zipfile
    from conftest import build_pair
    from test_differential import check_pair
    geo = tmp_path / 'geosparql_vocab_all_v1_0_1_updated.rdf'
    with zipfile.ZipFile(jena.fuseki_jar) as z:
        geo.write_bytes(z.read('schema/geosparql_vocab_all_v1_0_1_updated.rdf'))
    ours = tmp_path / 'things.rdf'
    ours.write_text(rdfxml_doc(200))
    for name, files in (('geosparql', [geo]), ('both', [geo, ours])):
        check_pair(build_pair(loader, jena, [str(f) for f in files], tmp_path / name), jena)

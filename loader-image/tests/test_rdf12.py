"""RDF 1.2 input (issue 14 item 3): triple terms `<<( s p o )>>` (nested), base directions
`"x"@en--ltr`, Turtle/TriG reified triples `<< s p o ~ r >>` and annotations `{| |}`, as Jena
5.6.0 reads and stores them.

No package registry ships the W3C RDF 1.2 test suites (searched: PyPI, npm, Maven Central,
crates.io), so the inputs are ours, written from the RDF 1.2 grammars (tests/data/rdf12/), and
Jena is the oracle for all of them:

* each file, and all of them in one load, against `tdb2.xloader`: the node table and every
  index record for record where blank-node-free, else counts + isomorphic tdbdump
  (test_differential.check_pair);
* Jena recomputes every node-table key of our database from the term it decodes there
  (tests/jena/NodeKeys.java: Jena's NodeTableTRDF + NodeLib.hash);
* SPARQL constants that must hit our hashed triple terms and directional literals give
  xloader's answers through tdb2.tdbquery;
* Jena's storage cannot hold "x"@en--ltr and "x"@en--rtl apart (one node key): strict mode
  stops at the first statement that brings the second direction (file:line:column, exit 3,
  whichever order the parallel chunks ran in), skip mode rejects every such statement and
  loads the rest;
* input Jena 5.6.0 refuses (`--RTL`) is refused.
"""
import json
import os
import re

import pytest

import tdb2read
from conftest import EXIT_BAD_INPUT, TESTS, build_pair, run
from test_differential import check_pair

DATA = os.path.join(TESTS, 'data', 'rdf12')
FILES = ['terms.nt', 'terms.nq', 'reifiers.ttl', 'graphs.trig']


@pytest.mark.parametrize('name', FILES)
def test_rdf12_file_matches_xloader(name, loader, jena, tmp_path):
    check_pair(build_pair(loader, jena, [os.path.join(DATA, name)], tmp_path / 'db'), jena)


@pytest.fixture(scope='module')
def all_pair(loader, jena, tmp_path_factory):
    return build_pair(loader, jena, [os.path.join(DATA, n) for n in FILES], tmp_path_factory.mktemp('rdf12') / 'db')


def test_rdf12_corpus_in_one_load_matches_xloader(all_pair, jena):
    ours, _ = check_pair(all_pair, jena)
    terms = [ours.term_at(nid) for _, nid in ours.node_records()]
    assert any(t[0] == 'triple' and t[3][0] == 'triple' for t in terms), 'no nested triple term stored'
    assert any(t[0] == 'lit' and t[4] == 'rtl' for t in terms), 'no directional literal stored'



def test_jena_recomputes_every_node_key(all_pair, jena):
    db = tdb2read.Database(all_pair.db)
    records = ''.join('%s %d\n' % (k.hex(), nid) for k, nid in db.node_records())
    r = run(['java', '-cp', os.path.join(jena.home, 'lib', '*'), os.path.join(TESTS, 'jena', 'NodeKeys.java'),
             all_pair.db], input=records, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert 'BAD' not in r.stdout, r.stdout[:3000]
    assert 'checked %d' % len(db.node_records()) in r.stdout, r.stdout[-500:]


QUERIES = {
    'triple-term-constant': 'SELECT ?s ?p { ?s ?p <<( <http://example/a> <http://example/b> "x" )>> }',
    'nested-triple-term-constant': '''SELECT ?s { ?s ?p <<( <http://example/a> <http://example/b>
        <<( <http://example/x> <http://example/y> <<( <http://example/deep> <http://example/er> "3"@de--rtl )>> )>> )>> }''',
    'escaped-triple-term-constant': '''SELECT ?s { ?s ?p <<( <http://example/a> <http://example/b>
        "quote \\" backslash \\\\ nl \\n tab \\t cr \\r ff \\f bs \\b uFFFD \\uFFFD é 😀" )>> }''',
    'directional-constant': 'SELECT ?s { ?s ?p "hello"@en--ltr }',
    'directional-constant-case': 'SELECT ?s { ?s ?p "مرحبا"@ar--rtl }',
    'language-without-direction': 'SELECT ?s { ?s ?p "hello"@en }',
    'reifiers': 'SELECT ?r ?t { ?r <http://www.w3.org/1999/02/22-rdf-syntax-ns#reifies> ?t } ORDER BY STR(?r)',
    'reifier-in-graph': 'SELECT ?g ?r { GRAPH ?g { ?r <http://example/in> ?x } }',
    'triple-term-in-graph': 'SELECT ?g ?o { GRAPH ?g { ?s ?p ?o FILTER(isTRIPLE(?o)) } }',
    'all-objects': 'SELECT ?s ?p ?o { ?s ?p ?o } ORDER BY STR(?s) STR(?p) STR(?o)',
}


@pytest.mark.parametrize('name', sorted(QUERIES))
def test_rdf12_sparql_answers_equal_jenas(name, all_pair, jena):
    q = QUERIES[name]
    want = all_pair.qref.tdbquery(q)
    got = jena.tdbquery(all_pair.db, q)
    rows = [l for l in want.split('\n')[1:] if l.strip()]
    assert rows, '%s: no answer on Jena\'s own load, the query proves nothing:\n%s' % (name, want)
    if '_:' in want:
        mask = lambda t: sorted(re.sub(r'_:\S+', '_:b', l) for l in t.split('\n') if l.strip())  # noqa: E731
        assert mask(got) == mask(want), '%s:\nours:\n%s\nJena:\n%s' % (name, got, want)
    else:
        assert sorted(got.split('\n')) == sorted(want.split('\n')), '%s:\nours:\n%s\nJena:\n%s' % (name, got, want)


# --------------------------------------------------------------------------- one key, two directions
def _conflicting_nt(path, first, second, filler):
    """`first` direction at line 2, `second` at line 4 + filler and again at the end."""
    lines = ['<http://example/s> <http://example/q> "z" .',
             '<http://example/s> <http://example/p> "x"@en--%s .' % first,
             '<http://example/s> <http://example/q> "y"@en--%s .' % second,
             '<http://example/t> <http://example/p> "x"@EN--%s .' % second]
    lines += ['<http://example/n%d> <http://example/q> "%d" .' % (i, i) for i in range(filler)]
    lines += ['<http://example/u> <http://example/p> "x"@en--%s .' % second]
    with open(path, 'w') as f:
        f.write('\n'.join(lines) + '\n')
    return len(lines)


ERR = re.compile(r'(\S+):(\d+):(\d+): "x"@en--(ltr|rtl): Jena 5\.6\.0 .*--(ltr|rtl) \(first at line (\d+)\)')


@pytest.mark.parametrize('filler', [0, 400_000], ids=['one-chunk', 'many-chunks'])
def test_second_direction_is_an_error_in_strict_mode(filler, loader, tmp_path):
    src = tmp_path / 'dir.nt'
    _conflicting_nt(src, 'rtl', 'ltr', filler)
    db = tmp_path / 'db'
    r = loader.load(db, [src], '--threads', '2', expect=EXIT_BAD_INPUT)
    m = ERR.search(r.stderr)
    assert m, r.stderr[-2000:]
    assert (m.group(1), m.group(2), m.group(3), m.group(4), m.group(5), m.group(6)) == \
        (str(src), '4', '39', 'ltr', 'rtl', '2'), r.stderr[-2000:]
    assert not os.path.exists(db)


def test_second_direction_is_an_error_in_turtle(loader, tmp_path):
    src = tmp_path / 'dir.ttl'
    src.write_text('PREFIX : <http://example/>\n:s :p "x"@en--ltr .\n:s :q "y"@en--rtl .\n:t :p\n   "x"@EN--rtl .\n')
    r = loader.load(tmp_path / 'db', [src], expect=EXIT_BAD_INPUT)
    assert '%s:5:4: "x"@en--rtl' % src in r.stderr, r.stderr[-2000:]
    assert '(first at line 2)' in r.stderr


def test_skip_mode_rejects_every_statement_of_the_second_direction(loader, jena, tmp_path):
    src = tmp_path / 'dir.nt'
    n = _conflicting_nt(src, 'ltr', 'rtl', 10)
    db, rej = tmp_path / 'db', tmp_path / 'rejects.jsonl'
    loader.load(db, [src], '--on-error', 'skip', '--rejects', rej)
    rejects = [json.loads(l) for l in open(rej)]
    assert [(x['line'], x['column']) for x in rejects] == [(4, 39), (n, 39)], rejects
    assert all('--rtl' in x['text'] and 'base direction' in x['reason'] for x in rejects), rejects
    dump = jena.tdbdump(str(db))
    assert '"x"@en--ltr' in dump and '"x"@en--rtl' not in dump, dump
    assert '"y"@en--rtl' in dump, 'another lexical form with rtl is no conflict'
    assert len([l for l in dump.split('\n') if l.strip()]) == n - 2


def test_direction_jena_refuses_is_refused(loader, jena, tmp_path):
    src = tmp_path / 'upper.nt'
    src.write_text('<http://example/s> <http://example/p> "x"@en--RTL .\n')
    j = run([os.path.join(jena.home, 'bin', 'riot'), '--validate', str(src)], env=jena.env)
    assert j.returncode != 0 or 'ERROR' in j.stdout + j.stderr, 'Jena 5.6.0 accepts --RTL now: %s' % j.stderr
    r = loader.load(tmp_path / 'db', [src], expect=EXIT_BAD_INPUT)
    assert '%s:1:' % src in r.stderr, r.stderr[-2000:]

"""Skip mode for Turtle/TriG keeps its promise (issue 14, item 5), end to end through the loader:
every statement is either loaded as written -- in its own graph -- or reported once in the
rejects file, with the line range it spans (`start_line`..`end_line`). The inputs are the
issue's reduced examples (from nanopublications); the database is read by Jena's tdbdump and by
our reader. The property itself, on generated documents, is rdf-input's
`skip_mode_keeps_every_statement_or_rejects_it` test and the `input_terse_recovery` fuzz target.
"""
import json
import os

import pytest

import tdb2read
from conftest import EXIT_BAD_INPUT, dump_quads

EX = 'http://ex/'


# Turtle/TriG files are cut into chunks parsed by the workers in parallel; a 1-byte chunk
# size cuts these small files after every statement (where a cut is allowed), so every case
# goes through the split and the state each chunk starts in.
@pytest.fixture(scope='session')
def loader(loader):
    return loader.with_env(RDF_BULKLOAD_TERSE_CHUNK_BYTES='1')


def iri(local):
    return ('iri', EX + local)


def load_skip(loader, tmp_path, name, text):
    src = tmp_path / name
    src.write_text(text, encoding='utf-8')
    db = tmp_path / 'db'
    loader.load(db, ['--on-error', 'skip', str(src)])
    with open(str(db) + '.rejects.jsonl', encoding='utf-8') as f:
        rejects = [json.loads(line) for line in f if line.strip()]
    for r in rejects:
        assert {'file', 'line', 'column', 'reason', 'text', 'start_line', 'end_line'} <= set(r), r
        assert r['file'] == str(src) and r['reason'].strip(), r
        assert r['start_line'] <= r['line'] <= r['end_line'], r
    with open(os.path.join(db, 'bulkload-report.json'), encoding='utf-8') as f:
        report = json.load(f)
    assert report['rejects'] == len(rejects), (report, rejects)
    return str(db), rejects


def quads(db):
    return {tuple(t if t is None or t[0] != 'lit' else t[:4] for t in q) for q in tdb2read.Database(db).quads()}


def test_error_inside_a_graph_block_keeps_the_block(loader, jena, tmp_path):
    """A rejected statement inside `:g { ... }`: the next statements stay in :g (not the default
    graph), the closing `}` is not rejected, and Jena reads the database so."""
    db, rejects = load_skip(loader, tmp_path, 'g.trig', (
        '@prefix : <http://ex/> .\n'
        ':g {\n'
        '  :a :p undefined:x .\n'
        '  :c :d :e .\n'
        '}\n'))
    assert [(r['start_line'], r['line'], r['end_line'], r['text']) for r in rejects] == \
        [(3, 3, 3, ':a :p undefined:x .')], rejects
    assert 'undefined' in rejects[0]['reason'], rejects
    want = {(iri('g'), iri('c'), iri('d'), iri('e'))}
    assert quads(db) == want
    assert dump_quads(jena.tdbdump(db)) == dump_quads('<http://ex/c> <http://ex/d> <http://ex/e> <http://ex/g> .\n')


NANOPUB = (
    '@prefix : <http://ex/> .\n'
    ':x :y [ :q :r :s ] ] .\n'
    ':b :created "2014" ;\n'
    '   a :E .\n')


def test_error_after_a_bracket_costs_one_statement_turtle(loader, tmp_path):
    """`:q :r :s ]`: the one error is rejected once, the next statement (two lines) loaded."""
    db, rejects = load_skip(loader, tmp_path, 'n.ttl', NANOPUB + ':q :r :s ] .\n:c :d "e" .\n')
    assert [(r['start_line'], r['end_line'], r['text']) for r in rejects] == \
        [(2, 2, ':x :y [ :q :r :s ] ] .'), (5, 5, ':q :r :s ] .')], rejects
    rdf_type = ('iri', 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type')
    assert quads(db) == {
        (None, iri('b'), iri('created'), ('lit', '2014', None, None)),
        (None, iri('b'), rdf_type, iri('E')),
        (None, iri('c'), iri('d'), ('lit', 'e', None, None)),
    }


def test_error_after_a_bracket_keeps_the_next_graph_block_trig(loader, tmp_path):
    """The same in TriG, followed by a complete graph block: the block is loaded, in its graph."""
    db, rejects = load_skip(loader, tmp_path, 'n.trig', NANOPUB + ':q :r :s ]\n:g { :x :y :z . :x :y "w" }\n')
    assert [(r['start_line'], r['end_line']) for r in rejects] == [(2, 2), (5, 6)], rejects
    # `:q :r :s ]` has no dot: the block opener is read as part of it, so the block goes
    # whole, with one reject that says so
    assert 'whole graph block' in rejects[1]['reason'], rejects
    (tmp_path / 'b').mkdir()
    db2, rejects2 = load_skip(loader, tmp_path / 'b', 'n.trig', NANOPUB + ':g { :x :y :z . :x :y "w" }\n')
    assert [(r['start_line'], r['end_line']) for r in rejects2] == [(2, 2)], rejects2
    assert {q for q in quads(db2) if q[0] is not None} == {
        (iri('g'), iri('x'), iri('y'), iri('z')),
        (iri('g'), iri('x'), iri('y'), ('lit', 'w', None, None)),
    }
    assert len(quads(db2)) == 4


def test_bad_graph_name_rejects_the_block_whole(loader, tmp_path):
    db, rejects = load_skip(loader, tmp_path, 'b.trig', (
        '@prefix : <http://ex/> .\n'
        'nope:g {\n'
        '  :a :b :c .\n'
        '  :d :e "}" .\n'
        '}\n'
        ':h { :a :b :c }\n'))
    assert len(rejects) == 1, rejects
    r = rejects[0]
    assert (r['start_line'], r['line'], r['end_line']) == (2, 2, 5), r
    assert 'whole graph block' in r['reason'] and ':d :e "}" .' in r['text'], r
    assert quads(db) == {(iri('h'), iri('a'), iri('b'), iri('c'))}


def test_multi_line_statement_rejected_with_its_line_range(loader, tmp_path):
    db, rejects = load_skip(loader, tmp_path, 'm.ttl', (
        '@prefix : <http://ex/> .\n'
        ':a :p "x . }" ,\n'
        '   """long\n. still in the string""" ;\n'
        '   :q undefined:y .\n'
        ':b :p :c .\n'))
    assert [(r['start_line'], r['line'], r['end_line']) for r in rejects] == [(2, 5, 5)], rejects
    assert rejects[0]['text'].startswith(':a :p "x . }" ,') and rejects[0]['text'].endswith(':q undefined:y .')
    assert quads(db) == {(None, iri('b'), iri('p'), iri('c'))}


def test_strict_mode_names_the_statement(loader, tmp_path):
    src = tmp_path / 'g.trig'
    src.write_text('@prefix : <http://ex/> .\n:g {\n  :a :p undefined:x .\n  :c :d :e .\n}\n', encoding='utf-8')
    r = loader.load(tmp_path / 'db', [str(src)], expect=EXIT_BAD_INPUT)
    assert '%s:3:9:' % src in r.stderr, r.stderr
    assert not os.path.exists(tmp_path / 'db')

"""Where we deliberately differ from Jena 5.6.0's loaders (docs/loader.md, "Fidelity"), each claim tried
on real Jena:

* input that RDF 1.1 forbids but tdb2.tdbloader and tdb2.xloader load: we refuse it (exit 3,
  `file:line:column: reason`);
* tdb2.xloader drops the default-graph statements of N-Quads/TriG files exactly when every input
  is N-Quads/TriG; we keep them (in the default graph, as tdbloader does).
"""
import hashlib
import os

import pytest

import tdb2read
from conftest import EXIT_BAD_INPUT, JENA_VERSION

# (file name, content, line and column of the error we report)
REFUSED = [
    ('relative-subject.nt', '<rel> <http://ex/p> <http://ex/o> .\n', (1, 1)),
    ('relative-object.nt', '<http://ex/s> <http://ex/p> <rel> .\n', (1, 29)),
    ('relative-graph.nq', '<http://ex/s> <http://ex/p> <http://ex/o> <rel> .\n', (1, 43)),
    ('no-final-dot.ttl', '@prefix ex: <http://ex/> .\nex:s ex:p ex:o\n', (3, 1)),
]


COUNT_ALL = 'SELECT (COUNT(*) AS ?n) { { ?s ?p ?o } UNION { GRAPH ?g { ?s ?p ?o } } }'


def jena_loads(jena, tool, src, tmp_path):
    """Statements `tool` loads from src (it must exit 0), kept under the Jena reference cache
    by Jena's version, the tool and the input's digest: Jena does not change between runs."""
    key = hashlib.sha256(('%s %s %s\n' % (JENA_VERSION, tool, src.name)).encode() + src.read_bytes()).hexdigest()[:24]
    path = os.path.join(jena.refs, 'loads', key)
    if not os.path.exists(path):
        db = tmp_path / ('jena-' + tool)
        if tool == 'tdb2.xloader':  # exit 0, or these raise
            jena.xloader(db, tmp_path / 'xwork', [src])
        else:
            jena.tdbloader(db, [src])
        out = jena.tdbquery(str(db), COUNT_ALL)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path + '.tmp', 'w') as f:
            f.write(out.strip().splitlines()[-1].split('^^')[0].strip('"'))
        os.replace(path + '.tmp', path)
    with open(path) as f:
        return int(f.read())


@pytest.mark.parametrize('name,text,where', REFUSED, ids=[c[0] for c in REFUSED])
def test_jena_loads_what_we_refuse(name, text, where, loader, jena, tmp_path):
    src = tmp_path / name
    src.write_text(text, encoding='utf-8')
    for tool in ('tdb2.tdbloader', 'tdb2.xloader'):
        assert jena_loads(jena, tool, src, tmp_path) == 1, '%s did not load the statement' % tool
    r = loader.load(tmp_path / 'db', [str(src)], expect=EXIT_BAD_INPUT)
    assert '%s:%d:%d: ' % ((src,) + where) in r.stderr, r.stderr
    assert not os.path.exists(tmp_path / 'db')


DEFAULT_NQ = ('<http://ex/s> <http://ex/p> "default 1" .\n'
              '<http://ex/s> <http://ex/p> "named" <http://ex/g> .\n'
              '<http://ex/s> <http://ex/p> "default 2" <urn:x-arq:DefaultGraph> .\n')
DEFAULT_TRIG = '<http://ex/s> <http://ex/p> "default 3" .\n<http://ex/g> { <http://ex/s> <http://ex/p> "named 2" }\n'
TRIPLE_NT = '<http://ex/s> <http://ex/p> "triple" .\n'


@pytest.mark.parametrize('names,xloader_keeps', [
    (['d.nq'], False),
    (['d.trig'], False),
    (['d.nq', 'd.trig'], False),
    (['d.nq', 't.nt'], True),
    (['t.ttl', 'd.trig'], True),
], ids=lambda v: '+'.join(v) if isinstance(v, list) else ('keeps' if v else 'drops'))
def test_xloader_drops_default_graph_only_when_every_input_is_quads(names, xloader_keeps, loader, jena, tmp_path):
    texts = {'d.nq': DEFAULT_NQ, 'd.trig': DEFAULT_TRIG, 't.nt': TRIPLE_NT, 't.ttl': TRIPLE_NT}
    files = []
    for n in names:
        (tmp_path / n).write_text(texts[n], encoding='utf-8')
        files.append(str(tmp_path / n))
    quad_defaults = {'d.nq': {'default 1', 'default 2'}, 'd.trig': {'default 3'}}
    want_default = set().union(*(quad_defaults.get(n, set()) for n in names))
    want_default |= {'triple'} if any(n.startswith('t.') for n in names) else set()

    def default_graph(db):
        return {q[3][1] for q in tdb2read.Database(db).quads() if q[0] is None}

    ref = jena.xloader_ref(files)
    got = default_graph(ref.db)
    if xloader_keeps:
        assert got == want_default, 'xloader kept %r' % got
    else:
        assert got == {'triple'} & want_default, 'xloader was expected to drop the quad files\' default graph: %r' % got
    loader.load(tmp_path / 'db', files)
    assert default_graph(str(tmp_path / 'db')) == want_default

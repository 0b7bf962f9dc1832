"""stats.opt: the optimizer statistics our loader writes must be what Jena's own
`tdb2.tdbstats` computes from the same database (total count, one entry per predicate,
one per rdf:type class), so query plans on our database match those on a Jena-built one.
tdbstats is run on our database itself: its content is proven equal to xloader's elsewhere.
"""
import os
import re

RDF_TYPE = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type'
_TOKEN = re.compile(r'\s*(?:(\()|(\))|(<[^>]*>)|("(?:[^"\\]|\\.)*"(?:\^\^<[^>]*>)?)|([^\s()]+))')


def sse(text):
    """Minimal SSE reader: nested lists of IRIs ('<...>'), strings, symbols and ints."""
    stack, pos = [[]], 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            if text[pos:].strip() == '':
                break
            raise ValueError('bad SSE at %r' % text[pos:pos + 40])
        pos = m.end()
        if m.group(1):
            stack.append([])
        elif m.group(2):
            done = stack.pop()
            stack[-1].append(done)
        else:
            tok = m.group(3) or m.group(4) or m.group(5)
            stack[-1].append(int(tok) if re.fullmatch(r'-?\d+', tok) else tok)
    return stack[0]


def stats_summary(text):
    """(count, {predicate IRI: n}, {class IRI: n}) from a stats.opt / tdbstats text."""
    doc = sse(text)
    assert len(doc) == 1 and doc[0][0] == 'stats', text[:200]
    count, preds, classes = None, {}, {}
    for entry in doc[0][1:]:
        if entry[0] == 'meta':
            for m in entry[1:]:
                if isinstance(m, list) and m[0] == 'count':
                    count = m[1]
        elif isinstance(entry[0], list) and entry[0][0] == 'VAR':
            assert entry[0][1] == '<%s>' % RDF_TYPE, entry
            classes[entry[0][2][1:-1]] = entry[1]
        elif isinstance(entry[0], str) and entry[0].startswith('<'):
            preds[entry[0][1:-1]] = entry[1]
        elif entry[0] == 'other':
            pass
        else:
            raise AssertionError('unexpected stats entry %r' % (entry,))
    return count, preds, classes


def check_stats(db, jena):
    ours = os.path.join(db, 'Data-0001', 'stats.opt')
    assert os.path.exists(ours), 'no stats.opt in %s/Data-0001' % db
    with open(ours, encoding='utf-8') as f:
        mine = stats_summary(f.read())
    theirs = stats_summary(jena.cmd('tdb2.tdbstats', '--loc', db).stdout)
    assert mine[0] == theirs[0], 'count %s, tdbstats says %s' % (mine[0], theirs[0])
    assert mine[1] == theirs[1], 'predicate counts differ: %r' % sorted(
        set(mine[1].items()) ^ set(theirs[1].items()))[:10]
    assert mine[2] == theirs[2], 'rdf:type class counts differ: %r' % sorted(
        set(mine[2].items()) ^ set(theirs[2].items()))[:10]
    assert theirs[1], 'no predicates counted: the comparison would prove nothing'


def test_stats_examples(examples_pair, jena):
    check_stats(examples_pair.db, jena)


def test_stats_edge_corpus(edge_all, jena):
    check_stats(edge_all.db, jena)


def test_stats_bsbm(bsbm_nt, jena):
    check_stats(bsbm_nt.db, jena)


def test_stats_rdf_container_members(loader, jena, tmp_path):
    """tdbstats leaves rdf:_N predicates out of the list but counts them in the total."""
    src = tmp_path / 'seq.ttl'
    src.write_text('@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .\n'
                   '<http://example.org/s> a rdf:Seq ; rdf:_1 "a" ; rdf:_2 "b" ; rdf:_10 "c" ; '
                   '<http://example.org/p> 1 .\n')
    loader.load(tmp_path / 'db', [src])
    check_stats(str(tmp_path / 'db'), jena)

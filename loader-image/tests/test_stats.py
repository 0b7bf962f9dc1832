"""stats.opt, computed by the loader while its indexes stream out of the sort, holds exactly the
counts that Jena's own `tdb2.tdbstats` computes by scanning the finished database: those of the
default graph plus those of the union of the named graphs (`--graph urn:x-arq:UnionGraph`).

Jena weighs every triple pattern with the one file, inside GRAPH too, and a predicate the file
does not list weighs 0 (`(other 0)`) and goes first. With the default graph's counts alone, the
named graphs' predicates would all weigh 0 and TDB2 would join in the order the query is written:
on bsbm-1m-ng (all in named graphs) `GRAPH ?g { ?r rev:reviewer ?x . ?r bsbm:reviewFor <P> }`
then scanned every review, about 100 times slower than without stats.opt."""
import re

from conftest import inspect_check

CLASS = re.compile(r'\(\(VAR <[^>]*> <([^>]*)>\) (\d+)\)')
PREDICATE = re.compile(r'(?<!VAR )\(<([^>]*)> (\d+)\)')
COUNT = re.compile(r'\(meta .*?\(count (\d+)\)')


def parse_stats(text):
    """The SSE file as {('class'|'predicate', IRI): count}, whatever its line breaks."""
    flat = ' '.join(text.split())
    entries = {('class', c): int(n) for c, n in CLASS.findall(flat)}
    entries.update({('predicate', p): int(n) for p, n in PREDICATE.findall(flat)})
    count = COUNT.search(flat)
    assert count, 'no (meta ... (count N)) in:\n' + text[:500]
    return int(count.group(1)), entries


def add_stats(a, b):
    entries = dict(a[1])
    for k, n in b[1].items():
        entries[k] = entries.get(k, 0) + n
    return a[0] + b[0], entries


def check_stats(jena, db):
    with open('%s/Data-0001/stats.opt' % db, encoding='utf-8') as f:
        ours = parse_stats(f.read())
    theirs = add_stats(parse_stats(jena.run_class('tdb2.tdbstats', '--loc', db).stdout),
                       parse_stats(jena.run_class('tdb2.tdbstats', '--loc', db, '--graph', 'urn:x-arq:UnionGraph').stdout))
    assert ours[0] == theirs[0], 'triple count: ours %d, tdbstats %d' % (ours[0], theirs[0])
    assert ours[1] == theirs[1], 'entries differ: only ours %s; only tdbstats %s' % (
        sorted(set(ours[1].items()) - set(theirs[1].items()))[:10],
        sorted(set(theirs[1].items()) - set(ours[1].items()))[:10])
    if ('predicate', 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type') in ours[1]:
        assert any(k[0] == 'class' for k in ours[1]), 'rdf:type is used but no class counts'


def test_stats_match_tdbstats_on_bsbm(jena, bsbm_nt):
    inspect_check(bsbm_nt.db)
    check_stats(jena, bsbm_nt.db)


def test_stats_match_tdbstats_on_the_edge_corpus(jena, edge_all):
    check_stats(jena, edge_all.db)


def test_stats_count_the_named_graphs(jena, bsbm_nq):
    """bsbm-1m-ng has every statement in a named graph: the counts must come from there."""
    check_stats(jena, bsbm_nq.db)
    with open('%s/Data-0001/stats.opt' % bsbm_nq.db, encoding='utf-8') as f:
        count, entries = parse_stats(f.read())
    assert count > 0 and entries

"""A generated Wikidata-shaped dump (`wikigen`, loader-image/crates/wikigen: the shapes of
`latest-all.ttl` -- labels, descriptions and aliases in hundreds of languages, `@zh-classical`
and `@mis-x-Q12345678` that BCP 47 refuses, statements with ranks, qualifiers, references and
value nodes, signed decimals, dates before year 1 and after 9999, WKT points, sitelinks,
lexemes, external-identifier IRIs with bad percent-encodings, the header and @prefix lines
repeated mid-file) loads in strict mode to exactly tdb2.xloader's database.

10^6 triples with "some value" as skolem IRIs: record for record, NodeIds included, and the
node table's data file byte for byte (check_pair); the loader's warning counts equal the
generator's (one per literal with such a tag, one per such IRI); Jena, asked for the dump's odd
terms as written (tags BCP 47 refuses, bad IRIs, signed decimals, years before 1 and after
9999, points on other globes), finds in our database what it finds in its own. A smaller dump
as the real one writes it, with blank nodes: the same record counts and isomorphic tdbdumps.

The dumps are kept under $RDF_BULKLOAD_CACHE/wikigen/, keyed by `wikigen --version`, the seed
and the size, so warm runs neither write them nor run xloader again (its reference is keyed by
the dump's digest).
"""
import gzip
import json
import os
import re
import shutil

import pytest

from conftest import CACHE, ROOT, build_pair, file_lock, run
from test_differential import check_pair

WIKIGEN = os.environ.get('RDF_BULKLOAD_WIKIGEN') or os.path.join(ROOT, 'loader-image', 'target', 'release', 'wikigen')
SEED = 33


def wikigen_dump(triples, seed, *flags):
    """(path of the .ttl.gz, the generator's stats) for this size, seed and flags, cached."""
    if not os.access(WIKIGEN, os.X_OK):
        pytest.fail('%s not found: run `make loader` (or set RDF_BULKLOAD_WIKIGEN)' % WIKIGEN)
    version = run([WIKIGEN, '--version']).stdout.strip()
    key = '%s-seed%d-%d%s' % (re.sub(r'[^A-Za-z0-9.]+', '_', version), seed, triples, ''.join(flags))
    d = os.path.join(CACHE, 'wikigen', key)
    with file_lock(d + '.lock'):
        if not os.path.exists(os.path.join(d, 'complete')):
            tmp = d + '.tmp'
            shutil.rmtree(tmp, ignore_errors=True)
            os.makedirs(tmp)
            r = run([WIKIGEN, '--triples', str(triples), '--seed', str(seed), '--stats',
                     os.path.join(tmp, 'stats.json')] + list(flags) + [os.path.join(tmp, 'wikidata.ttl.gz')])
            assert r.returncode == 0, r.stderr[-3000:]
            open(os.path.join(tmp, 'complete'), 'w').close()
            shutil.rmtree(d, ignore_errors=True)
            os.rename(tmp, d)
    with open(os.path.join(d, 'stats.json')) as f:
        return os.path.join(d, 'wikidata.ttl.gz'), json.load(f)


# The dump's odd terms, as written: the first of each in the dump is looked up by Jena.
ODD_TERMS = [
    r'"[^"\\]*"@zh-classical',
    r'"[^"\\]*"@mis-x-Q\d{8,}',
    r'<[^<>\s]*%(?![0-9A-Fa-f]{2})[^<>\s]*>',
    r'"-\d+(\.\d+)?"\^\^xsd:decimal',
    r'"\+\d{1,6}\.\d*0"\^\^xsd:decimal',
    r'"\+\d{20,}(\.\d+)?"\^\^xsd:decimal',
    r'"-\d{4,}-\d\d-\d\dT00:00:00Z"\^\^xsd:dateTime',
    r'"0000-\d\d-\d\dT00:00:00Z"\^\^xsd:dateTime',
    r'"\d{5,}-\d\d-\d\dT00:00:00Z"\^\^xsd:dateTime',
    r'"<http://www.wikidata.org/entity/Q\d+> Point\([^"]*\)"\^\^geo:wktLiteral',
    r'"-?\d+(\.\d+)?E-\d+"\^\^xsd:double',
]
PREFIXES = ('PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n'
            'PREFIX geo: <http://www.opengis.net/ont/geosparql#>\n')


def odd_term_query(dump):
    """One query for every odd term (one opening of each database)."""
    with gzip.open(dump, 'rt', encoding='utf-8') as f:
        text = f.read()
    terms = []
    for pattern in ODD_TERMS:
        m = re.search(pattern, text)
        assert m, 'no %s in %s' % (pattern, dump)
        terms.append(m.group(0))
    return PREFIXES + 'SELECT ?o ?s ?p WHERE {\n  VALUES ?o {\n    %s\n  }\n  ?s ?p ?o\n} ORDER BY ?o ?s ?p' % (
        '\n    '.join(terms)), len(terms)


def report(db):
    with open(os.path.join(db, 'bulkload-report.json'), encoding='utf-8') as f:
        return json.load(f)


def test_generated_dump_matches_xloader_record_for_record(loader, jena, tmp_path):
    dump, stats = wikigen_dump(10 ** 6, SEED, '--skolem')
    counts = stats['counts']
    # What the test is about is in the dump.
    for shape in ('lang_not_bcp47', 'bad_iris', 'dates_before_year_1', 'dates_after_9999', 'wkt_points',
                  'lexemes', 'sitelinks', 'qualifiers', 'reference_nodes', 'value_nodes_quantity', 'deprecated'):
        assert counts[shape] > 0, (shape, counts)
    assert counts['headers'] == stats['shards'] > 1 and counts['blank_nodes'] > 0
    built = build_pair(loader, jena, [dump], tmp_path / 'db')
    check_pair(built, jena, tdbdump=False)
    r = report(built.db)
    assert r['statements'] == 10 ** 6
    assert r['warnings'] == {'language-tag-not-bcp47': counts['lang_not_bcp47'], 'iri-not-rfc3987': counts['bad_iris']}
    query, n = odd_term_query(dump)
    want = built.ref.tdbquery(query)
    assert len({line.split('\t')[0] for line in want.strip().split('\n')[1:]}) == n, want  # each is found
    assert jena.tdbquery(built.db, query) == want


def test_generated_dump_with_blank_nodes_matches_xloader(loader, jena, tmp_path):
    """As the dump writes "some value" and the properties' OWL restrictions: blank nodes."""
    dump, stats = wikigen_dump(30_000, SEED)
    assert stats['counts']['blank_nodes'] > 0 and stats['counts']['somevalue'] > 0
    check_pair(build_pair(loader, jena, [dump], tmp_path / 'db'), jena)

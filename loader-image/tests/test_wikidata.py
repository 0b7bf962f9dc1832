"""Real Wikidata RDF (../shared/datasets/wikidata/: the Query Service's test data, 2024 dumps)
loads in strict mode with Jena's statements: each file, loaded by us and by tdb2.xloader,
must give the same database (check_pair: record for record, NodeIds included, without blank
nodes; with them, the same record counts and isomorphic tdbdumps). The files hold language
tags that BCP 47 refuses and the Turtle grammar allows (`@zh-classical`), which Jena keeps with
a warning: our report counts them and shows the first ones where they are written.
"""
import json
import os

import pytest

from conftest import build_pair, shared_path
from test_differential import check_pair

WIKIDATA = ['Q24628793.ttl', 'Q37599471.ttl', 'Q42.ttl', 'Q513-munged.ttl', 'Q_INTERSECTION.ttl',
            'commons_dump.ttl', 'lexeme_dump.ttl', 'small_dump.ttl', 'small_dump_chunk.ttl', 'test.ttl']


def test_every_file_is_listed():
    d = shared_path('datasets', 'wikidata')
    assert sorted(n for n in os.listdir(d) if n.endswith('.ttl')) == sorted(WIKIDATA)


@pytest.mark.parametrize('name', WIKIDATA)
def test_wikidata_file_matches_xloader(name, loader, jena, tmp_path):
    f = shared_path('datasets', 'wikidata', name)
    built = build_pair(loader, jena, [f], tmp_path / 'db')     # strict: the default
    check_pair(built, jena)


def test_language_tags_bcp47_refuses_are_counted_where_written(loader, tmp_path):
    f = shared_path('datasets', 'wikidata', 'Q513-munged.ttl')
    db = tmp_path / 'db'
    r = loader.load(db, [f])
    with open(os.path.join(db, 'bulkload-report.json'), encoding='utf-8') as fh:
        report = json.load(fh)
    with open(f, encoding='utf-8') as fh:
        lines = fh.read().split('\n')
    written = sum(line.count('@zh-classical') for line in lines)
    assert written > 0
    # One warning per statement holding such a literal (zh-classical and any other).
    assert report['warnings'].get('language-tag-not-bcp47', 0) >= written, report['warnings']
    examples = [e for e in report['warning_examples'] if e['kind'] == 'language-tag-not-bcp47']
    assert 0 < len(examples) <= 5, examples
    for e in examples:
        assert e['file'] == f
        assert lines[e['line'] - 1][e['column'] - 1:].startswith('@' + e['term']), e
    first = min((i + 1 for i, l in enumerate(lines) if '@zh-classical' in l))
    assert any(e['line'] == first and e['term'] == 'zh-classical' for e in examples), (first, examples)
    # The log (JSON lines when not on a terminal): one `warnings` event with the same figures.
    events = [json.loads(l) for l in r.stderr.split('\n') if l.startswith('{')]
    logged = [e for e in events if e['event'] == 'warnings']
    assert len(logged) == 1, r.stderr[-2000:]
    assert logged[0]['counts'] == report['warnings'] and logged[0]['examples'] == report['warning_examples']
    summary = [e for e in events if e['event'] == 'summary'][0]
    assert summary['warnings'] == sum(report['warnings'].values())

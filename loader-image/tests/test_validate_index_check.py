"""The validate step checks a database of any size in seconds (issue 32, item 6): Jena follows a
seeded sample of records through every index and both directions of the node table, and counts
the statements only when the build report says there are few. Each damage below is one that a
count-free check must still see: an index that lacks records the others hold, a node table whose
term index maps terms to other NodeIds, a table empty in some indexes only, a report that
disagrees with the database.

The damages are made by giving database A files of database B (the same shape, other contents):
Jena opens both without complaint, so only the cross-checks can tell.
"""
import json
import os
import shutil
import subprocess

import pytest

from conftest import EXIT_BAD_INPUT, EXIT_OK, ROOT

VALIDATE = os.path.join(ROOT, 'loader-image', 'validate', 'rdf-bulkload-validate')
SAMPLES = 64


def write_input(path, triples, quads, keep=lambda i: True):
    with open(path, 'w') as f:
        for i in range(triples):
            if keep(i):
                f.write('<http://example.org/s%d> <http://example.org/p%d> "%d" .\n' % (i, i % 7, i))
        for i in range(quads):
            if keep(i):
                f.write('<http://example.org/s%d> <http://example.org/q%d> <http://example.org/o%d> '
                        '<http://example.org/g%d> .\n' % (i, i % 5, i % 11, i % 3))


@pytest.fixture(scope='module')
def databases(loader, tmp_path_factory):
    """A: 3000 triples and 2000 quads; B: every other statement of A's input, triples only."""
    work = tmp_path_factory.mktemp('index-check')
    write_input(work / 'a.nq', 3000, 2000)
    write_input(work / 'b.nq', 3000, 0, keep=lambda i: i % 2 == 0)
    loader.load(work / 'a', [work / 'a.nq'])
    loader.load(work / 'b', [work / 'b.nq'])
    return work


def validate(jena, db, *args):
    r = subprocess.run(['sh', VALIDATE, '--loc', str(db), *args], env=dict(os.environ, JENA_HOME=jena.home),
                       capture_output=True, text=True, timeout=600)
    return r


def damaged(databases, tmp_path, files):
    """A copy of database A with the named files of its Data-0001 taken from B."""
    db = tmp_path / 'damaged'
    shutil.copytree(databases / 'a', db)
    for name in files:
        shutil.copyfile(databases / 'b' / 'Data-0001' / name, db / 'Data-0001' / name)
    return db


def test_every_index_is_sampled_and_counting_is_left_to_small_databases(jena, databases):
    r = validate(jena, databases / 'a', '--count-limit', '0')
    assert r.returncode == EXIT_OK, r.stderr
    out = json.loads(r.stdout)
    check = out['index_check']
    assert check['triple_indexes'] == ['SPO', 'POS', 'OSP'] and len(check['quad_indexes']) == 6, check
    # first, last and the samples of each of the nine indexes, each looked up in every index of its
    # table and through the graph API, each NodeId decoded and looked up again
    assert check['sampled'] == 9 * (SAMPLES + 2), check
    assert check['index_lookups'] == 3 * (SAMPLES + 2) * 4 + 6 * (SAMPLES + 2) * 7, check
    assert check['node_lookups'] == 3 * (SAMPLES + 2) * 3 + 6 * (SAMPLES + 2) * 4, check
    assert (out['counted'], out['triples'], out['quads'], out['graphs']) == (False, 3000, 2000, None), out

    counted = json.loads(validate(jena, databases / 'a').stdout)
    assert (counted['counted'], counted['triples'], counted['quads'], counted['graphs']) == (True, 3000, 2000, 3)
    assert counted['index_check'] == check, 'the sample is seeded: a rerun checks the same records'


def test_an_index_lacking_records_the_others_hold_is_invalid(jena, databases, tmp_path):
    db = damaged(databases, tmp_path, ['POS.bpt', 'POS.dat', 'POS.idn'])
    r = validate(jena, db, '--count-limit', '0')
    assert r.returncode == EXIT_BAD_INPUT, (r.returncode, r.stderr)
    assert 'index POS lacks the statement' in r.stderr and 'index probe, exit 3' in r.stderr, r.stderr


def test_a_term_index_that_maps_terms_elsewhere_is_invalid(jena, databases, tmp_path):
    db = damaged(databases, tmp_path, ['nodes.bpt', 'nodes.dat', 'nodes.idn'])
    r = validate(jena, db, '--count-limit', '0')
    assert r.returncode == EXIT_BAD_INPUT, (r.returncode, r.stderr)
    assert 'is indexed as' in r.stderr, r.stderr


def test_a_table_empty_in_some_indexes_only_is_invalid(jena, databases, tmp_path):
    db = damaged(databases, tmp_path, ['GPOS.bpt', 'GPOS.dat', 'GPOS.idn'])
    r = validate(jena, db, '--count-limit', '0')
    assert r.returncode == EXIT_BAD_INPUT, (r.returncode, r.stderr)
    assert '1 of 6 indexes are empty' in r.stderr, r.stderr


def test_a_report_that_disagrees_about_a_table_is_invalid(jena, databases, tmp_path):
    db = damaged(databases, tmp_path, [])
    report = json.loads((db / 'bulkload-report.json').read_text())
    report['quads'] = 0
    (db / 'bulkload-report.json').write_text(json.dumps(report))
    r = validate(jena, db, '--count-limit', '0')
    assert r.returncode == EXIT_BAD_INPUT, (r.returncode, r.stderr)
    assert 'the build report says 0 quads; Jena finds the quad indexes not empty' in r.stderr, r.stderr

"""Suite (e): bad input, failure hygiene, determinism, input formats.

* strict mode stops at the first bad statement: exit 3 and `FILE:LINE:COL: reason` on stderr;
* skip mode writes each rejected statement as a JSON line {file,line,column,reason,text} to the
  rejects file (default `<DB>.rejects.jsonl`), keeps every good statement, and the report counts
  are exact; more rejects than --max-rejects fails (exit 3);
* after any failure nothing exists at the output path (no half database);
* two runs on the same input give byte-identical database directories, blank nodes included;
* compression (gzip, multi-member gzip, bzip2, zstd) is detected by content and gives the same
  database as the plain file.
"""
import bz2
import filecmp
import gzip
import json
import os
import re
import shutil
import signal
import subprocess
import time

import pytest

import rdfcanon
import tdb2read
from conftest import (EDGE, EXIT_BAD_INPUT, EXIT_INTERRUPTED, EXIT_MISSING, EXIT_OK, EXIT_USAGE,
                      shared_path)

EX = 'http://example.org/bad/'
GOOD = ['<{0}s{1}> <{0}p> "good {1}" .'.format(EX, i) for i in range(1, 9)]
# (line text, why it is bad) -- each is a syntax error for an N-Triples/N-Quads parser
BAD = [
    ('<{0}s> <{0}p> "unterminated .'.format(EX), 'unterminated string'),
    ('<{0}s> <{0}p> .'.format(EX), 'missing object'),
    ('<{0}s> "literal predicate" <{0}o> .'.format(EX), 'literal as predicate'),
    ('<{0}s> <{0}p> <{0}o>'.format(EX), 'missing final dot'),
    ('<{0}s with space> <{0}p> <{0}o> .'.format(EX), 'space in IRI'),
]
POSITION = r':(\d+):(\d+): \S'


def report_of(db):
    with open(os.path.join(db, 'bulkload-report.json'), encoding='utf-8') as f:
        return json.load(f)


def canon_term(t):
    """tdb2read's term -> rdfcanon's (literal direction dropped; none occur here)."""
    return t if t is None or t[0] != 'lit' else ('lit', t[1], t[2], t[3])


def write(path, lines, end='\n'):
    with open(path, 'w', encoding='utf-8') as f:
        f.write(end.join(lines) + end)
    return str(path)


def assert_nothing_at(db):
    assert not os.path.exists(db), 'a failed load left %s behind: %s' % (db, os.listdir(db) if os.path.isdir(db) else '')


def mixed(tmp_path, name='mixed.nt'):
    """GOOD and BAD interleaved; returns (path, {line number: bad text})."""
    lines, bad_at = [], {}
    for i, g in enumerate(GOOD):
        lines.append(g)
        if i < len(BAD):
            lines.append(BAD[i][0])
            bad_at[len(lines)] = BAD[i][0]
    return write(tmp_path / name, lines), bad_at


# ----------------------------------------------------------------------------- strict
@pytest.mark.parametrize('bad', BAD, ids=[b[1] for b in BAD])
def test_strict_reports_file_line_column(bad, loader, tmp_path):
    src = write(tmp_path / 'in.nt', GOOD[:3] + [bad[0]] + GOOD[3:])
    db = tmp_path / 'db'
    r = loader.load(db, [src], expect=EXIT_BAD_INPUT)
    m = re.search(re.escape(src) + POSITION, r.stderr)
    assert m, 'no "%s:LINE:COL: reason" on stderr:\n%s' % (src, r.stderr)
    assert int(m.group(1)) == 4, 'error reported on line %s, the bad statement is on line 4' % m.group(1)
    assert 1 <= int(m.group(2)) <= len(bad[0]) + 1
    assert_nothing_at(db)


def test_strict_error_in_second_file_names_that_file(loader, tmp_path):
    a = write(tmp_path / 'a.nt', GOOD)
    b = write(tmp_path / 'b.nt', GOOD[:5] + [BAD[0][0]])
    db = tmp_path / 'db'
    r = loader.load(db, [a, b], expect=EXIT_BAD_INPUT)
    assert re.search(re.escape(b) + ':6:' + r'\d+: \S', r.stderr), r.stderr
    assert_nothing_at(db)


def test_strict_turtle_error_position(loader, tmp_path):
    src = tmp_path / 'bad.ttl'
    src.write_text('@prefix ex: <%s> .\n\nex:a ex:p ex:b ;\n   ex:q "x" ,\n   ex:r ] .\n' % EX)
    db = tmp_path / 'db'
    r = loader.load(db, [src], expect=EXIT_BAD_INPUT)
    m = re.search(re.escape(str(src)) + POSITION, r.stderr)
    assert m and int(m.group(1)) == 5, r.stderr
    assert_nothing_at(db)


def test_strict_error_deep_in_gzip_names_the_line(loader, tmp_path):
    """Line numbers count decompressed lines across the whole (chunked) file."""
    lines = ['<{0}s{1}> <{0}p> "{1}"^^<http://www.w3.org/2001/XMLSchema#integer> .'.format(EX, i) for i in range(200000)]
    lines[150000] = BAD[1][0]
    src = tmp_path / 'big.nt.gz'
    with gzip.open(src, 'wt', encoding='utf-8', compresslevel=1) as f:
        f.write('\n'.join(lines) + '\n')
    db = tmp_path / 'db'
    r = loader.load(db, [src], expect=EXIT_BAD_INPUT)
    assert re.search(re.escape(str(src)) + r':150001:\d+: \S', r.stderr), r.stderr[-2000:]
    assert_nothing_at(db)


def test_missing_input_exit_4(loader, tmp_path):
    db = tmp_path / 'db'
    r = loader.load(db, [tmp_path / 'does-not-exist.nt'], expect=EXIT_MISSING)
    assert 'does-not-exist.nt' in r.stderr
    assert_nothing_at(db)


@pytest.mark.parametrize('argv', [['load'], ['load', '--loc'], ['load', '--no-such-option', 'x', 'f.nt'],
                                  ['load', '--on-error', 'sometimes', '--loc', 'DB', 'f.nt'], ['frobnicate']],
                         ids=['no-args', 'loc-without-value', 'unknown-option', 'bad-on-error', 'unknown-command'])
def test_usage_errors_exit_2(argv, loader, tmp_path):
    argv = [str(tmp_path / 'db') if a == 'DB' else a for a in argv]
    r = loader.run(*argv)
    assert r.returncode == EXIT_USAGE, (r.returncode, r.stderr)
    assert_nothing_at(tmp_path / 'db')


# ----------------------------------------------------------------------------- skip mode
def test_skip_mode_rejects_file_and_report_counts(loader, tmp_path):
    src, bad_at = mixed(tmp_path)
    db = tmp_path / 'db'
    extra_report = tmp_path / 'report-copy.json'
    loader.load(db, ['--on-error', 'skip', '--max-rejects', str(len(bad_at)), '--report', extra_report, src])
    rejects_path = str(db) + '.rejects.jsonl'
    assert os.path.exists(rejects_path), 'default rejects file <DB>.rejects.jsonl missing'
    with open(rejects_path, encoding='utf-8') as f:
        rejects = [json.loads(l) for l in f if l.strip()]
    assert len(rejects) == len(bad_at), rejects
    for rej in rejects:
        assert {'file', 'line', 'column', 'reason', 'text'} <= set(rej), rej
        assert rej['file'] == src
        assert rej['line'] in bad_at, rej
        assert rej['text'].strip() == bad_at[rej['line']].strip(), rej
        assert isinstance(rej['column'], int) and rej['column'] >= 1
        assert rej['reason'].strip()
    assert sorted(r['line'] for r in rejects) == sorted(bad_at)
    # the database holds every good statement and nothing else
    got = {tuple(canon_term(t) for t in q) for q in tdb2read.Database(str(db)).quads()}
    assert got == {rdfcanon.parse_line(g) for g in GOOD}
    rep = report_of(db)
    assert rep['rejects'] == len(bad_at), rep
    assert rep['triples'] == len(GOOD) and rep['quads'] == 0, rep
    with open(extra_report, encoding='utf-8') as f:
        assert json.load(f) == rep, '--report copy differs from DB/bulkload-report.json'


def test_skip_mode_custom_rejects_file_nquads(loader, tmp_path):
    lines = ['<{0}s> <{0}p> "q{1}" <{0}g> .'.format(EX, i) for i in range(5)]
    lines.insert(2, '<{0}s> <{0}p> "q" "literal graph" .'.format(EX))
    lines.insert(4, '<{0}s> <{0}p> "q" <{0}g> <{0}extra> .'.format(EX))
    src = write(tmp_path / 'in.nq', lines)
    db, rej = tmp_path / 'db', tmp_path / 'my-rejects.jsonl'
    loader.load(db, ['--on-error', 'skip', '--rejects', rej, src])
    with open(rej, encoding='utf-8') as f:
        rejects = [json.loads(l) for l in f if l.strip()]
    assert sorted(r['line'] for r in rejects) == [3, 5], rejects
    rep = report_of(db)
    assert rep['rejects'] == 2 and rep['quads'] == 5 and rep['triples'] == 0, rep
    assert not os.path.exists(str(db) + '.rejects.jsonl') or os.path.samefile(str(db) + '.rejects.jsonl', rej)


def test_skip_mode_over_max_rejects_fails(loader, tmp_path):
    src, bad_at = mixed(tmp_path)
    db = tmp_path / 'db'
    r = loader.load(db, ['--on-error', 'skip', '--max-rejects', str(len(bad_at) - 1), src], expect=None)
    assert r.returncode == EXIT_BAD_INPUT, repr(r)
    assert_nothing_at(db)
    # exactly at the limit is fine
    loader.load(db, ['--on-error', 'skip', '--max-rejects', str(len(bad_at)), src])


def test_skip_mode_zero_max_rejects_fails_on_first(loader, tmp_path):
    src, _ = mixed(tmp_path)
    db = tmp_path / 'db'
    r = loader.load(db, ['--on-error', 'skip', '--max-rejects', '0', src], expect=None)
    assert r.returncode == EXIT_BAD_INPUT, repr(r)
    assert_nothing_at(db)


def test_clean_input_reports_zero_rejects(loader, tmp_path):
    db = tmp_path / 'db'
    src = os.path.join(EDGE, 'inline.nt')
    loader.load(db, ['--on-error', 'skip', src])
    rep = report_of(db)
    assert rep['rejects'] == 0
    n = len(tdb2read.Database(str(db)).tree('SPO'))
    assert rep['triples'] == n, (rep['triples'], n)
    assert rep['inputs'][0]['path'].endswith('inline.nt')


# ----------------------------------------------------------------------------- interruption
def test_interrupt_leaves_nothing_at_loc_and_resumes(loader, tmp_path):
    # ~4.6M statements (each file read 3 times), so the load is still running when signalled
    srcs = [shared_path('datasets', 'bsbm-1m.nt.gz'), shared_path('datasets', 'bsbm-1m-ng.nq.gz')] * 3
    db = tmp_path / 'db'
    p = subprocess.Popen(loader.cmd + ['load', '--loc', str(db)] + srcs, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)
    assert p.poll() is None, 'load finished within 1 s; cannot test interruption'
    p.send_signal(signal.SIGINT)
    try:
        _, err = p.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        p.kill()
        raise
    assert p.returncode == EXIT_INTERRUPTED, (p.returncode, err[-2000:])
    assert_nothing_at(db)
    # The work done is kept as a checkpoint; the same command finishes the load from it.
    r = loader.load(db, srcs)
    assert '"event":"resuming"' in r.stderr or '"event":"resumable"' not in err, r.stderr[-2000:]
    leftovers = [n for n in os.listdir(tmp_path) if n != 'db']
    assert not leftovers, 'temporary files left after the resumed load: %r' % leftovers


# ----------------------------------------------------------------------------- determinism
def tree_files(root):
    out = {}
    for d, _, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            out[os.path.relpath(p, root)] = p
    return out


DETERMINISTIC_REPORT_KEYS = ('statements', 'triples', 'quads', 'distinct_terms', 'rejects', 'prefixes')


def test_two_runs_byte_identical_with_blank_nodes(loader, tmp_path):
    files = [os.path.join(EDGE, n) for n in ('bnodes.ttl', 'bnodes.nq', 'bnodes.trig', 'inline.nt', 'graphs.trig')]
    a, b = tmp_path / 'a' / 'db', tmp_path / 'b' / 'db'
    loader.load(a, files)
    loader.load(b, files)
    fa, fb = tree_files(a), tree_files(b)
    assert sorted(fa) == sorted(fb)
    assert any(n.startswith('Data-0001') for n in fa)
    differ = [n for n in fa if n != 'bulkload-report.json' and not filecmp.cmp(fa[n], fb[n], shallow=False)]
    assert not differ, 'files differ between two runs on the same input: %r' % differ
    ra, rb = report_of(a), report_of(b)
    for k in DETERMINISTIC_REPORT_KEYS:
        assert ra[k] == rb[k], k
    assert [i['md5'] for i in ra['inputs']] == [i['md5'] for i in rb['inputs']]
    # and blank nodes really were there
    assert any(t[0] == 'bnode' for t in tdb2read.Database(str(a)).node_table().values())


# ----------------------------------------------------------------------------- compression
def _compressors():
    out = {
        'gzip': lambda data, p: gzip.open(p, 'wb').write(data),
        'gzip-multimember': lambda data, p: open(p, 'wb').write(
            gzip.compress(data[:len(data) // 3]) + gzip.compress(data[len(data) // 3:])),
        'bzip2': lambda data, p: open(p, 'wb').write(bz2.compress(data)),
    }
    try:
        import zstandard
        out['zstd'] = lambda data, p: open(p, 'wb').write(zstandard.ZstdCompressor().compress(data))
    except ImportError:
        pass
    return out


@pytest.mark.parametrize('kind', sorted(_compressors()))
@pytest.mark.parametrize('named', ['by-extension', 'by-content-only'])
def test_compressed_input_same_database(kind, named, loader, tmp_path):
    src = os.path.join(EDGE, 'literals.nt')
    data = open(src, 'rb').read()
    ext = {'gzip': '.gz', 'gzip-multimember': '.gz', 'bzip2': '.bz2', 'zstd': '.zst'}[kind]
    comp = tmp_path / ('literals.nt' + (ext if named == 'by-extension' else ''))
    _compressors()[kind](data, comp)
    plain, packed = tmp_path / 'plain', tmp_path / 'packed'
    loader.load(plain, [src])
    loader.load(packed, [comp])
    fa, fb = tree_files(os.path.join(plain, 'Data-0001')), tree_files(os.path.join(packed, 'Data-0001'))
    assert sorted(fa) == sorted(fb)
    differ = [n for n in fa if not filecmp.cmp(fa[n], fb[n], shallow=False)]
    assert not differ, '%s input gives a different database: %r' % (kind, differ)

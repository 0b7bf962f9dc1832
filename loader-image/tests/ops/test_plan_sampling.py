"""`plan`'s statement estimate on a dump whose start is unlike the rest: real BSBM generator
output (../shared/datasets/bsbm-1m.nt.gz: products first, compressing 33:1, reviews later, 4.6:1).

Every fourth line of it (the same shape, a quarter of the compression time) is written as
.nt, .nt.bz2, multi-frame .nt.zst, multi-member .nt.gz, one-member .nt.gz and .nt.zst; all
of it as eight .nt.gz files of consecutive lines, and as Turtle (prefixes at the top, a
subject's triples in one `;` list), plain and as .ttl.bz2. plan must be within +-10% of the real count (the
lines), and the head window alone must not be, where it is not: the sampling is what makes
the estimate right.
"""
import bz2
import gzip
import json
import os

import pytest
import zstandard

from conftest import EXIT_OK, shared_path

MARGIN = 0.10


@pytest.fixture(scope='module')
def bsbm_all_lines():
    with gzip.open(shared_path('datasets', 'bsbm-1m.nt.gz'), 'rb') as f:
        return f.read().splitlines(keepends=True)


@pytest.fixture(scope='module')
def bsbm_lines(bsbm_all_lines):
    return bsbm_all_lines[::4]


def chunks(lines, n):
    return [b''.join(lines[i * len(lines) // n:(i + 1) * len(lines) // n]) for i in range(n)]


TURTLE_PREFIXES = {
    'rdf': 'http://www.w3.org/1999/02/22-rdf-syntax-ns#',
    'rdfs': 'http://www.w3.org/2000/01/rdf-schema#',
    'dc': 'http://purl.org/dc/elements/1.1/',
    'rev': 'http://purl.org/stuff/rev#',
    'foaf': 'http://xmlns.com/foaf/0.1/',
    'bsbm': 'http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/',
    'inst': 'http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/instances/',
}


def turtle(lines):
    """N-Triples lines as Turtle: prefixed names where the local part is plain, one
    statement per run of lines with the same subject."""
    def term(t):
        if t.startswith(b'<') and t.endswith(b'>'):
            iri = t[1:-1].decode()
            for p, ns in TURTLE_PREFIXES.items():
                local = iri[len(ns):]
                if iri.startswith(ns) and local.replace('_', 'a').isalnum() and local.isascii():
                    return ('%s:%s' % (p, local)).encode()
        return t
    out = [b''.join(b'@prefix %s: <%s> .\n' % (p.encode(), ns.encode()) for p, ns in TURTLE_PREFIXES.items())]
    subject = None
    for line in lines:
        s, p, rest = line.rstrip(b'\n').split(b' ', 2)
        o = rest[:-2].rstrip()
        if s == subject:
            out.append(b' ;\n    %s %s' % (term(p), term(o)))
        else:
            out.append((b' .\n' if subject else b'') + b'%s %s %s' % (term(s), term(p), term(o)))
        subject = s
    out.append(b' .\n')
    return b''.join(out)


def write_inputs(kind, lines, d):
    """The files of one format, in `d`."""
    data = b''.join(lines)
    if kind == 'nt':
        paths = [d / 'a.nt']
        paths[0].write_bytes(data)
    elif kind == 'bz2':
        paths = [d / 'a.nt.bz2']
        paths[0].write_bytes(bz2.compress(data, 9))
    elif kind == 'zst-frames':
        c = zstandard.ZstdCompressor(level=3)
        paths = [d / 'a.nt.zst']
        paths[0].write_bytes(b''.join(c.compress(x) for x in chunks(lines, 16)))
    elif kind == 'gz-members':
        paths = [d / 'a.nt.gz']
        paths[0].write_bytes(b''.join(gzip.compress(x, 6) for x in chunks(lines, 16)))
    elif kind == 'gz-one':
        paths = [d / 'a.nt.gz']
        paths[0].write_bytes(gzip.compress(data, 6))
    elif kind == 'zst-one':
        paths = [d / 'a.nt.zst']
        paths[0].write_bytes(zstandard.ZstdCompressor(level=3).compress(data))
    elif kind == 'ttl':
        paths = [d / 'a.ttl']
        paths[0].write_bytes(turtle(lines))
    elif kind == 'ttl-bz2':
        paths = [d / 'a.ttl.bz2']
        paths[0].write_bytes(bz2.compress(turtle(lines), 9))
    elif kind == 'gz-files':
        paths = []
        for i, x in enumerate(chunks(lines, 8)):
            paths.append(d / ('part-%d.nt.gz' % i))
            paths[-1].write_bytes(gzip.compress(x, 1))
    return [str(p) for p in paths]


# How each format is expected to be read, and whether its head alone misjudges it.
CASES = {
    'nt': ('spread windows', 'line', False),
    'bz2': ('spread windows', 'bzip2 block', True),
    'zst-frames': ('spread windows', 'zstd frame', True),
    'gz-members': ('spread windows', 'gzip member', True),
    'gz-one': ('head, uncompressed size known', 'ISIZE trailer', True),
    'zst-one': ('head, uncompressed size known', 'one zstd frame', True),
    'gz-files': ('head, uncompressed size known', 'ISIZE trailer', True),
    'ttl': ('spread windows', 'line', True),
    'ttl-bz2': ('spread windows', 'bzip2 block', True),
}


@pytest.mark.parametrize('kind', list(CASES))
def test_plan_estimate_within_the_margin(kind, bsbm_lines, bsbm_all_lines, loader, tmp_path):
    # Eight files of a quarter would each be read whole: the dump set is the whole dump.
    # Turtle takes all of it, so that subjects keep their `;` lists.
    lines = bsbm_all_lines if kind in ('gz-files', 'ttl', 'ttl-bz2') else bsbm_lines
    real = len(lines)
    files = write_inputs(kind, lines, tmp_path)
    r = loader.run('plan', '--loc', tmp_path / 'db', *files)
    assert r.returncode == EXIT_OK, r.stderr
    plan = json.loads(r.stdout)
    basis, method, head_off = CASES[kind]
    for i in plan['inputs']:
        assert i['basis'] == basis and method in i['method'], i
    est = plan['estimated_statements']
    assert abs(est - real) <= MARGIN * real, (kind, est, real)
    head = sum(i['head_statements'] for i in plan['inputs'])
    if head_off:
        assert abs(head - real) > MARGIN * real, ('the head alone is right: this input tests nothing', head, real)


def test_a_load_whose_plan_was_off_says_so_once(bsbm_lines, loader, tmp_path):
    """xz gives no random access: plan extrapolates its head (products, 33:1) per compressed
    byte and overestimates. The load counts, and says so once, with both numbers."""
    import lzma
    src = tmp_path / 'a.nt.xz'
    src.write_bytes(lzma.compress(b''.join(bsbm_lines), preset=3))
    real = len(bsbm_lines)
    r = loader.load(tmp_path / 'db', [src], '--progress-interval', '50ms', check=False)
    events = [json.loads(l) for l in r.stderr.splitlines() if l.startswith('{')]
    planned = [e for e in events if e['event'] == 'plan'][0]['estimated_statements']
    assert abs(planned - real) > MARGIN * real, ('the plan was right: this load tests nothing', planned)
    off = [e for e in events if e['event'] == 'plan_off']
    assert len(off) == 1, off
    assert off[0]['planned_statements'] == planned and off[0]['statements'] == real, off[0]
    assert off[0]['final_count'] == (real < planned), off[0]
    summary = [e for e in events if e['event'] == 'summary'][0]
    assert summary['statements'] == real
    # The progress lines' extrapolation is the rate seen so far; at the end it is the count.
    parse = [e for e in events if e['event'] == 'progress' and e['phase'] == 'parse' and e.get('bytes_read')]
    assert parse and all('statements_expected' in e for e in parse)
    # A plan within the margin: no warning.
    src = tmp_path / 'b.nt'
    src.write_bytes(b''.join(bsbm_lines))
    r = loader.load(tmp_path / 'db2', [src], check=False)
    assert r.returncode == EXIT_OK, r.stderr
    assert '"plan_off"' not in r.stderr, r.stderr

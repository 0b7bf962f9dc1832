"""Failure modes (issue 4): every one ends with its documented exit code, a message that names
the cause (file, numbers), and nothing at --loc -- no half database, no `.NAME.building` or
`.NAME.spill` left behind.

* truncated and corrupt gzip, bzip2, zstd, xz and lzma input: exit 3, the file and "truncated or
  corrupt";
  with and without the plan check (which samples the input first and meets the damage there);
* an input that disappears after the loader detected it: exit 4 with its path;
* a full disk, as --tmpdir and as the parent of --loc (an 8 MiB tmpfs): exit 5, "no space";
* a memory budget too small to proceed: exit 5 with the numbers.
"""
import bz2
import gzip
import json
import lzma
import os
import re
import subprocess
import time

import pytest

from conftest import EXIT_BAD_INPUT, EXIT_MISSING, EXIT_OK, EXIT_RESOURCES
from opslib import assert_clean, loader_fp, small_filesystem, synthetic_nt  # noqa: F401 (fixture)


def _zstd(data):
    import zstandard
    return zstandard.ZstdCompressor(write_checksum=True).compress(data)


COMPRESSORS = {'gzip': ('.gz', gzip.compress), 'bzip2': ('.bz2', bz2.compress), 'zstd': ('.zst', _zstd),
               'xz': ('.xz', lambda d: lzma.compress(d, format=lzma.FORMAT_XZ)),
               'lzma': ('.lzma', lambda d: lzma.compress(d, format=lzma.FORMAT_ALONE))}


def damaged(kind, how, tmp_path):
    """An N-Triples file of 50k statements, compressed with `kind`, then cut in half
    ('truncated') or with 64 bytes zeroed in the middle of the compressed stream ('corrupt')."""
    text = ''.join('<http://example.org/s%d> <http://example.org/p> "value %d" .\n' % (i, i) for i in range(50000))
    ext, compress = COMPRESSORS[kind]
    data = compress(text.encode())
    mid = len(data) // 2
    data = data[:mid] if how == 'truncated' else data[:mid] + b'\0' * 64 + data[mid + 64:]
    path = tmp_path / ('dump-%s.nt%s' % (how, ext))
    path.write_bytes(data)
    return str(path)


@pytest.mark.parametrize('check', ['with-plan-check', 'skip-plan-check'])
@pytest.mark.parametrize('how', ['truncated', 'corrupt'])
@pytest.mark.parametrize('kind', sorted(COMPRESSORS))
def test_damaged_compressed_input_exit_3(kind, how, check, loader, tmp_path):
    src = damaged(kind, how, tmp_path)
    db = tmp_path / 'db'
    opts = ['--skip-plan-check'] if check == 'skip-plan-check' else []
    r = loader.load(db, opts + [src], expect=EXIT_BAD_INPUT)
    err = r.stderr.strip().splitlines()[-1]
    assert src in err, 'the message does not name the file: %s' % err
    assert '%s compression' % kind in err and 'truncated or corrupt' in err, err
    assert_clean(db)


def test_input_that_disappears_exit_4(loader_fp, tmp_path):
    """The loader detects (and plans) both files of a directory at the start and opens them
    when the parse phase reads them; the second is removed in between. A delay point at the
    start of the parse phase makes the window deterministic."""
    d = tmp_path / 'dump'
    d.mkdir()
    synthetic_nt(d / 'a.nt', 100)
    second = synthetic_nt(d / 'b.nt', 100)
    db = tmp_path / 'db'
    env = dict(os.environ, FAILPOINTS='progress.parse=sleep(2000)')
    p = subprocess.Popen([loader_fp, 'load', '--loc', str(db), '--progress-interval', '60', str(d)],
                         stderr=subprocess.PIPE, text=True, env=env)
    seen = []
    try:
        for line in p.stderr:  # the parse phase's first progress line comes before the delay
            seen.append(line)
            if line.startswith('{"ts"') and '"event":"progress"' in line and '"phase":"parse"' in line:
                os.remove(second)
                break
        else:
            pytest.fail('no parse progress line before the load ended:\n' + ''.join(seen))
        err = p.stderr.read()
        p.wait(120)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == EXIT_MISSING, (p.returncode, err)
    assert second in err and 'cannot read input' in err, err
    assert_clean(db)


def test_full_tmpdir_exit_5(loader, tmp_path):
    """Spill files overflow an 8 MiB --tmpdir: the dictionary of 200k long distinct terms
    (~60 MB) does not fit a 128 MiB budget and spills."""
    src = synthetic_nt(tmp_path / 'big.nt', 200000)
    with small_filesystem(tmp_path / 'small') as small:
        db = tmp_path / 'db'
        r = loader.load(db, ['--tmpdir', small, '--memory', '128Mi', '--threads', '1', '--skip-plan-check', src],
                        expect=EXIT_RESOURCES)
        assert 'no space left on device' in r.stderr, r.stderr[-2000:]
        assert_clean(db, small)
        assert os.listdir(small) == [], os.listdir(small)


def test_full_target_filesystem_exit_5_then_resume(loader, tmp_path):
    """The database (three triple indexes of 200k records = 14 MB, plus the node table) does
    not fit the 8 MiB filesystem that holds --loc. The disk fills after the parse
    checkpoint, so the checkpointed work is kept (and said so); once the filesystem has
    room, the same command resumes and completes the database."""
    src = synthetic_nt(tmp_path / 'big.nt', 200000)
    (tmp_path / 'tmp').mkdir()
    with small_filesystem(tmp_path / 'small') as small:
        db = os.path.join(small, 'db')
        args = ['--tmpdir', tmp_path / 'tmp', '--skip-plan-check', src]
        r = loader.load(db, args, expect=EXIT_RESOURCES)
        assert 'no space left on device' in r.stderr, r.stderr[-2000:]
        assert not os.path.exists(db), 'a failed load left %s behind' % db
        assert '"event":"resumable"' in r.stderr, r.stderr[-2000:]
        assert os.path.exists(os.path.join(tmp_path, 'tmp', '.db.spill', 'checkpoint.json'))
        # Room again (the volume was grown): the rerun resumes after the parse checkpoint.
        subprocess.run(['mount', '-o', 'remount,size=64m', small], check=True)
        r = loader.load(db, args)
        assert '"event":"resuming"' in r.stderr, r.stderr[-2000:]
        rep = json.load(open(os.path.join(db, 'bulkload-report.json')))
        assert rep['triples'] == 200000, rep
        assert rep['resumed_after'] in ('parse', 'nodes') or rep['resumed_after'].startswith('indexes'), rep
        assert sorted(os.listdir(small)) == ['db'], os.listdir(small)
        assert os.listdir(tmp_path / 'tmp') == [], 'work directory left after success'


@pytest.mark.parametrize('check', ['with-plan-check', 'skip-plan-check'])
def test_budget_too_small_exit_5_with_numbers(check, loader, tmp_path):
    src = synthetic_nt(tmp_path / 'in.nt', 100)
    db = tmp_path / 'db'
    opts = ['--skip-plan-check'] if check == 'skip-plan-check' else []
    r = loader.load(db, ['--memory', '1Mi', '--threads', '2'] + opts + [src], expect=EXIT_RESOURCES)
    m = re.search(r'--memory 1 MiB is below the minimum of (\d+) MiB for 2 threads', r.stderr)
    assert m and int(m.group(1)) > 1, r.stderr
    assert_clean(db)
    # and the budget it names is enough
    loader.load(db, ['--memory', '%sMi' % m.group(1), '--threads', '2', src], expect=EXIT_OK, check=False)

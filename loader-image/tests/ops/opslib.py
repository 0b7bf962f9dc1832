"""Helpers of the operations suites (tests/ops): inputs made in the test, small filesystems,
the crash-point build of the loader, and the no-leftovers check."""
import contextlib
import os
import subprocess

import pytest

from conftest import IN_CI

EX = 'http://example.org/ops/'


def synthetic_nt(path, n, width=60):
    """n triples, each with a new subject and a new string object of about `width` characters,
    so the dictionary and the tuple logs grow with n (nothing collapses)."""
    pad = 'x' * width
    with open(path, 'w', encoding='utf-8') as f:
        for i in range(n):
            f.write('<%ss%08d/%s> <%sp%d> "value %d %s" .\n' % (EX, i, pad, EX, i % 7, i, pad))
    return str(path)


def leftovers(*dirs, name='db'):
    """Temporary build or spill directories of a load whose --loc is NAME, in dirs."""
    out = []
    for d in dirs:
        if os.path.isdir(d):
            out += [os.path.join(d, n) for n in os.listdir(d) if n.startswith('.%s.' % name)]
    return out


def assert_clean(db, *dirs):
    assert not os.path.exists(db), 'a failed load left %s behind' % db
    left = leftovers(os.path.dirname(str(db)), *dirs, name=os.path.basename(str(db)))
    assert not left, 'temporary directories left after a failed load: %r' % left


@contextlib.contextmanager
def small_filesystem(path, size='8m'):
    """A tmpfs of `size` mounted at path (tests run as root here); skips, saying why, where
    mounting is not permitted."""
    os.makedirs(path, exist_ok=True)
    r = subprocess.run(['mount', '-t', 'tmpfs', '-o', 'size=%s' % size, 'tmpfs', str(path)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        pytest.skip('cannot mount a %s tmpfs at %s (needs root / CAP_SYS_ADMIN): %s' % (size, path, r.stderr.strip()))
    try:
        yield str(path)
    finally:
        subprocess.run(['umount', '-l', str(path)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


@pytest.fixture(scope='session')
def loader_fp():
    """The loader built with crash/delay points (`make loader-failpoints`), from
    $RDF_BULKLOAD_FAILPOINTS."""
    binary = os.environ.get('RDF_BULKLOAD_FAILPOINTS')
    if not binary or not os.access(binary, os.X_OK):
        msg = 'the failpoints build of the loader is needed: run `make loader-failpoints` and set RDF_BULKLOAD_FAILPOINTS (make test-loader-ops does both)'
        if IN_CI:
            pytest.fail(msg)
        pytest.skip(msg)
    return binary


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]

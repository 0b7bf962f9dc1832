"""`rdf-bulkload plan`, the plan check of `load`, progress output and Prometheus metrics.

* plan describes the inputs (format, compression, size), counts a small input exactly, gives
  memory and disk needs with the free space, and exits 0 when the build fits;
* plan and load refuse (exit 5, numbers, nothing created) when the temp filesystem is too small;
* without a terminal, progress is JSON lines -- every one parses -- covering every phase, with
  the per-phase times and a final summary; on a terminal (a pseudo-terminal here) it is bars
  with the phase names, a rate and an ETA, then a table of the phases;
* --metrics-addr serves /metrics while the load runs (phase, bytes read, statements, memory,
  temp disk), and --metrics-linger after it until a signal; the load still ends with exit 0.
"""
import fcntl
import gzip
import json
import os
import pty
import re
import select
import struct
import subprocess
import termios
import time
import urllib.request

import pytest

from conftest import EXIT_OK, EXIT_RESOURCES
from opslib import assert_clean, free_port, loader_fp, small_filesystem, synthetic_nt  # noqa: F401 (fixture)

PHASES = ['parse', 'nodes', 'indexes', 'finish']


def test_plan_describes_inputs_and_fits(loader, tmp_path):
    nt = synthetic_nt(tmp_path / 'a.nt', 1000)
    gz = str(tmp_path / 'b.nt.gz')
    with open(nt, 'rb') as f, gzip.open(gz, 'wb') as g:
        g.write(f.read())
    r = loader.run('plan', '--loc', tmp_path / 'db', '--memory', '1Gi', nt, gz)
    assert r.returncode == EXIT_OK, r.stderr
    plan = json.loads(r.stdout)  # not a terminal: JSON
    ins = {os.path.basename(i['path']): i for i in plan['inputs']}
    assert ins['a.nt']['syntax'] == 'n-triples' and ins['a.nt']['compression'] == 'none'
    assert ins['b.nt.gz']['compression'] == 'gzip' and ins['b.nt.gz']['bytes'] == os.path.getsize(gz)
    # small inputs are read to their end: exact counts (terms are counted per file)
    assert all(i['basis'] == 'sampled to the end' for i in plan['inputs'])
    assert plan['estimated_statements'] == 2000
    assert ins['a.nt']['distinct_terms'] == 1000 + 7 + 1000  # subjects, predicates, objects
    assert plan['verdict'] == 'fits' and plan['problems'] == []
    assert plan['disk']['tmp_free_bytes'] > 0 and plan['disk']['database_bytes'] > 3 * 24 * 2000
    assert plan['memory']['budget_bytes'] == 1 << 30
    assert not os.path.exists(tmp_path / 'db'), 'plan must not create anything'


def test_plan_and_load_refuse_a_too_small_tmp_filesystem(loader, tmp_path):
    # ~60 MB of distinct terms: the checkpointed dictionary alone needs more than 8 MiB
    src = synthetic_nt(tmp_path / 'big.nt', 200000)
    with small_filesystem(tmp_path / 'small') as small:
        db = tmp_path / 'db'
        r = loader.run('plan', '--loc', db, '--tmpdir', small, src)
        assert r.returncode == EXIT_RESOURCES, (r.returncode, r.stderr)
        plan = json.loads(r.stdout)
        assert plan['verdict'] == 'does_not_fit'
        m = re.search(r'needs ~([\d.]+) MiB of temp disk on %s, ([\d.]+) MiB free' % re.escape(small), r.stderr)
        assert m, r.stderr
        assert float(m.group(1)) > 8 >= float(m.group(2)), r.stderr
        assert plan['disk']['tmp_peak_bytes'] > plan['disk']['tmp_free_bytes']

        r = loader.load(db, ['--tmpdir', small, src], expect=EXIT_RESOURCES)
        assert 'cannot fit' in r.stderr and 'of temp disk on %s' % small in r.stderr, r.stderr
        assert_clean(db, small)
        assert os.listdir(small) == []


def test_json_progress_covers_every_phase(loader, tmp_path):
    src = synthetic_nt(tmp_path / 'in.nt', 50000)
    r = loader.load(tmp_path / 'db', ['--progress-interval', '50ms', src], check=False)
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert lines[-1].startswith('loaded '), lines[-1]
    events = [json.loads(l) for l in lines[:-1]]  # every other line is JSON
    # one envelope: "ts" (RFC 3339 UTC, milliseconds) and "event" first, in that order
    for line, e in zip(lines, events):
        assert list(e)[:2] == ['ts', 'event'], line
        assert re.fullmatch(r'\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z', e['ts']), line
    progress = [e for e in events if e['event'] == 'progress']
    assert [p for p in PHASES if p in {e['phase'] for e in progress}] == PHASES, progress
    parse = [e for e in progress if e['phase'] == 'parse']
    assert all(e['bytes_total'] == os.path.getsize(src) for e in parse)
    assert {'bytes_read', 'bytes_per_second', 'statements', 'memory_bytes', 'memory_budget_bytes',
            'temp_disk_bytes'} <= set(parse[-1]), parse[-1]
    assert any(e['phase'] == 'indexes' and 'records_total' in e for e in progress)
    timed = [e['phase'] for e in events if e['event'] == 'phase_done']
    assert timed == PHASES, timed
    assert all(e['seconds'] >= 0 for e in events if e['event'] == 'phase_done')
    summary = events[-1]
    assert summary['event'] == 'summary' and summary['result'] == 'ok', summary
    assert [x['name'] for x in summary['phases']] == PHASES and summary['statements'] == 50000, summary


def _run_on_pty(argv, timeout=120, stream='stderr'):
    """Runs argv with stderr (or stdout) on a pseudo-terminal of 40x120; returns (exit code,
    what it printed there)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack('HHHH', 40, 120, 0, 0))
    outs = {'stdout': subprocess.DEVNULL, 'stderr': subprocess.DEVNULL}
    outs[stream] = slave
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, **outs)
    os.close(slave)
    out = b''
    deadline = time.time() + timeout
    while time.time() < deadline:
        ready, _, _ = select.select([master], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the other side is closed
                break
            if not chunk:
                break
            out += chunk
        elif p.poll() is not None:
            break
    os.close(master)
    p.wait(30)
    return p.returncode, re.sub(r'\x1b\[[0-9;?]*[A-Za-z]', '', out.decode('utf-8', 'replace'))


def test_progress_bars_on_a_terminal(loader, tmp_path):
    src = synthetic_nt(tmp_path / 'in.nt', 50000)
    code, text = _run_on_pty(loader.cmd + ['load', '--loc', str(tmp_path / 'db'), src])
    assert code == EXIT_OK, text[-3000:]
    for phase in PHASES:
        assert re.search(r'\b%s\b' % phase, text), 'no %s bar:\n%s' % (phase, text[-3000:])
    assert re.search(r'\d+(\.\d+)? ?[KMG]?i?B/s', text), 'no byte rate:\n' + text[-3000:]
    assert 'ETA' in text
    assert re.search(r'parse done in [\d.]+s', text), text[-3000:]
    assert re.search(r'phase\s+time\s+share\s+parse\s+[\d.]+s\s+[\d.]+%', text), 'no summary table:\n' + text[-3000:]
    assert '{"ts"' not in text, 'JSON lines on a terminal'


def test_plan_on_a_terminal_is_a_table(loader, tmp_path):
    src = synthetic_nt(tmp_path / 'in.nt', 1000)
    code, text = _run_on_pty(loader.cmd + ['plan', '--loc', str(tmp_path / 'db'), '--memory', '1Gi', src], stream='stdout')
    assert code == EXIT_OK, text
    assert re.search(r'in\.nt\s+n-triples\s+none\s+[\d.]+ KiB\s+1000\s+sampled to the end', text), text
    assert re.search(r'distinct terms\s+~2007', text), text
    assert 'id remap table' in text and 'verdict: fits' in text, text


def _scrape(port):
    with urllib.request.urlopen('http://127.0.0.1:%d/metrics' % port, timeout=5) as r:
        assert r.status == 200
        assert r.headers['Content-Type'].startswith('text/plain')
        return r.read().decode()


def _value(text, name):
    m = re.search(r'^%s (\S+)$' % re.escape(name), text, re.M)
    assert m, '%s not in\n%s' % (name, text)
    return float(m.group(1))


def test_metrics_while_running(loader_fp, tmp_path):
    """A delay point makes the (one) parse job of a small input take 3 s; /metrics is scraped
    while it sleeps."""
    src = synthetic_nt(tmp_path / 'in.nt', 2000)
    port = free_port()
    env = dict(os.environ, FAILPOINTS='progress.parse_job=sleep(3000);progress.finish=sleep(2000)')
    p = subprocess.Popen([loader_fp, 'load', '--loc', str(tmp_path / 'db'), '--metrics-addr', '127.0.0.1:%d' % port, src],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        text = None
        deadline = time.time() + 60
        while time.time() < deadline and p.poll() is None:
            try:
                text = _scrape(port)
            except OSError:
                time.sleep(0.05)
                continue
            if _value(text, 'rdf_bulkload_load_statements_total') > 0:
                break
            time.sleep(0.05)
        assert text is not None, 'never scraped /metrics while the load ran'
        for name in ['rdf_bulkload_load_phase', 'rdf_bulkload_load_input_read_bytes_total',
                     'rdf_bulkload_load_input_bytes', 'rdf_bulkload_load_input_read_bytes_per_second',
                     'rdf_bulkload_load_statements_total', 'rdf_bulkload_load_rejects_total',
                     'rdf_bulkload_load_memory_bytes', 'rdf_bulkload_load_memory_budget_bytes',
                     'rdf_bulkload_load_temp_disk_bytes']:
            assert '# HELP %s ' % name.replace('_total', '') in text, name
        assert _value(text, 'rdf_bulkload_load_phase{phase="parse"}') == 1
        assert _value(text, 'rdf_bulkload_load_phase{phase="indexes"}') == 0
        assert _value(text, 'rdf_bulkload_load_input_read_bytes_total') == os.path.getsize(src)
        assert _value(text, 'rdf_bulkload_load_input_bytes') == os.path.getsize(src)
        assert _value(text, 'rdf_bulkload_load_statements_total') == 2000
        assert 0 < _value(text, 'rdf_bulkload_load_memory_bytes') <= _value(text, 'rdf_bulkload_load_memory_budget_bytes')
        # the finish phase (delayed 2 s): the earlier phases' durations are there
        while time.time() < deadline and p.poll() is None:
            text = _scrape(port)
            if _value(text, 'rdf_bulkload_load_phase{phase="finish"}') == 1:
                break
            time.sleep(0.05)
        for phase in ['parse', 'nodes', 'indexes']:
            assert _value(text, 'rdf_bulkload_load_phase_duration_seconds{phase="%s"}' % phase) >= 0
        assert _value(text, 'rdf_bulkload_load_phase_duration_seconds{phase="parse"}') >= 3, 'the parse job slept 3 s'
        assert _value(text, 'rdf_bulkload_load_index_records_written_total{index="SPO"}') == 2000
        assert _value(text, 'rdf_bulkload_load_terms_written_total') == 2000 + 7 + 2000
        _, err = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == EXIT_OK, err[-3000:]
    with pytest.raises(OSError):  # the server stopped with the load
        _scrape(port)


def test_metrics_linger_serves_the_final_figures_until_a_signal(loader_fp, tmp_path):
    """--metrics-linger: once the load has told its outcome, /metrics still serves the final
    figures (every phase's duration, the totals) -- what a load shorter than a scrape interval
    needs to be scraped at all; SIGTERM ends the linger at once, and the load's exit code (0)
    stands. Without --metrics-addr the flag is a usage error."""
    src = synthetic_nt(tmp_path / 'in.nt', 2000)
    port = free_port()
    p = subprocess.Popen([loader_fp, 'load', '--loc', str(tmp_path / 'db'), '--metrics-addr', '127.0.0.1:%d' % port,
                          '--metrics-linger', '1h', src], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        # read the descriptor itself: a buffered reader could hold the line select() waits for
        err, deadline = b'', time.time() + 60
        while b'loaded 2000 triples' not in err and time.time() < deadline and p.poll() is None:
            if select.select([p.stderr.fileno()], [], [], 1)[0]:
                err += os.read(p.stderr.fileno(), 1 << 16)
        assert b'loaded 2000 triples' in err, err[-3000:]
        time.sleep(0.5)
        assert p.poll() is None, 'exited instead of lingering'
        text = _scrape(port)
        for phase in PHASES:
            assert _value(text, 'rdf_bulkload_load_phase_duration_seconds{phase="%s"}' % phase) >= 0
        assert _value(text, 'rdf_bulkload_load_statements_total') == 2000
        assert _value(text, 'rdf_bulkload_load_index_records_written_total{index="OSP"}') == 2000
        p.terminate()
        p.communicate(timeout=10)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == EXIT_OK
    with pytest.raises(OSError):  # the server stopped at the signal
        _scrape(port)
    r = subprocess.run([loader_fp, 'load', '--loc', str(tmp_path / 'db2'), '--metrics-linger', '5s', src],
                       capture_output=True, text=True)
    assert r.returncode == 2 and '--metrics-addr' in r.stderr, r.stderr


def test_metrics_address_in_use_is_a_usage_error(loader, tmp_path):
    import socket
    src = synthetic_nt(tmp_path / 'in.nt', 10)
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        s.listen(1)
        port = s.getsockname()[1]
        r = loader.load(tmp_path / 'db', ['--metrics-addr', '127.0.0.1:%d' % port, src], expect=2)
    assert '--metrics-addr 127.0.0.1:%d: cannot listen' % port in r.stderr, r.stderr
    assert_clean(tmp_path / 'db')

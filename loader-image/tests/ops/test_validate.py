"""The validate step's failure modes (issue 32, item 6): what stops it is told apart from a bad
database, so that the operator retries what a rerun can fix and fails only on the database.

* SIGTERM while Jena answers a probe (a node drain, the step's deadline): the script stops Java
  and exits 6 at once (retried), not when the probe ends, and not 3 (BadInput: final);
* Java stopped by a signal of its own: 6;
* Jena's OutOfMemoryError: 5 (ResourceExhausted), naming the memory setting;
* any other Java failure: 3, with Jena's message;
* the default heap follows the container's memory limit (-XX:MaxRAMPercentage), not a fixed 1g.

Java is stood in for by a script (JAVA=...) that behaves as each case needs; the probes against
real Jena are run by the image test (hack/test_oci_images.py) and the cluster suite.
"""
import os
import signal
import subprocess
import time

from conftest import EXIT_BAD_INPUT, EXIT_INTERRUPTED, EXIT_OK, EXIT_RESOURCES

VALIDATE = os.path.join(os.path.dirname(__file__), '..', '..', 'validate', 'rdf-bulkload-validate')


def fake_java(tmp_path, body):
    """A `java` that records its arguments and PID, then runs body (sh)."""
    java = tmp_path / 'java'
    java.write_text('#!/bin/sh\necho "$$" > "%s/java.pid"\necho "$@" > "%s/java.args"\n%s\n'
                    % (tmp_path, tmp_path, body))
    java.chmod(0o755)
    return java


def setup(tmp_path, body, **env):
    db = tmp_path / 'db'
    (db / 'Data-0001').mkdir(parents=True, exist_ok=True)
    jena = tmp_path / 'jena'
    (jena / 'lib').mkdir(parents=True, exist_ok=True)
    (jena / 'lib' / 'jena-tdb2-5.6.0.jar').write_bytes(b'')
    e = dict(os.environ, JENA_HOME=str(jena), JAVA=str(fake_java(tmp_path, body)), TMPDIR=str(tmp_path))
    e.pop('JAVA_OPTS', None)
    e.update(env)
    return ['sh', VALIDATE, '--loc', str(db), '--no-report-check'], e


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is gone for our purpose
    with open('/proc/%d/stat' % pid) as f:
        return f.read().split(') ')[1][0] != 'Z'


def test_sigterm_during_a_probe_stops_java_and_exits_interrupted(tmp_path):
    cmd, env = setup(tmp_path, 'exec sleep 60')
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pid_file = tmp_path / 'java.pid'
    deadline = time.time() + 10
    while not pid_file.exists() and time.time() < deadline:
        time.sleep(0.05)
    assert pid_file.exists(), 'Java was never started'
    time.sleep(0.2)
    java = int(pid_file.read_text())
    sent = time.time()
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=10)
    assert p.returncode == EXIT_INTERRUPTED, (p.returncode, err)
    assert time.time() - sent < 5, 'the signal waited for the probe to end'
    assert 'stopped by a signal during the index probe' in err, err
    time.sleep(0.2)
    assert not alive(java), 'Java outlived the validate step'
    assert not [n for n in os.listdir(tmp_path) if n.startswith('rdf-bulkload-validate.')], 'temporary files left'


def test_java_stopped_by_a_signal_is_interrupted(tmp_path):
    cmd, env = setup(tmp_path, 'kill -TERM $$')
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=30)
    assert r.returncode == EXIT_INTERRUPTED, (r.returncode, r.stderr)


def test_out_of_memory_is_resources_not_a_bad_database(tmp_path):
    cmd, env = setup(tmp_path, 'echo "Exception in thread \\"main\\" java.lang.OutOfMemoryError: Java heap space" >&2; exit 1')
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=30)
    assert r.returncode == EXIT_RESOURCES, (r.returncode, r.stderr)
    assert 'ran out of memory in the index probe' in r.stderr and 'spec.validate.resources' in r.stderr, r.stderr


def test_a_database_jena_cannot_read_is_bad_input(tmp_path):
    cmd, env = setup(tmp_path, 'echo "org.apache.jena.dboe.DBOpEnvException: Bad file" >&2; exit 1')
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=30)
    assert r.returncode == EXIT_BAD_INPUT, (r.returncode, r.stderr)
    assert 'DBOpEnvException: Bad file' in r.stderr and 'index probe, exit 1' in r.stderr, r.stderr


def test_the_heap_follows_the_memory_limit_unless_set(tmp_path):
    answers = ('case "$*" in *IndexCheck*) echo \'{"triples_empty":false,"quads_empty":true}\';; *COUNT*) printf "?triples\\t?quads\\t?graphs\\n1\\t0\\t0\\n";; '
               '*ASK*) printf "?_askResult\\ntrue\\n";; *) printf "?p\\n<urn:p>\\n";; esac')
    cmd, env = setup(tmp_path, answers)
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=30)
    assert r.returncode == EXIT_OK, (r.returncode, r.stderr)
    assert (tmp_path / 'java.args').read_text().startswith('-XX:MaxRAMPercentage=75 '), (tmp_path / 'java.args').read_text()
    cmd, env = setup(tmp_path, answers, JAVA_OPTS='-Xmx3g')
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=30)
    assert r.returncode == EXIT_OK and (tmp_path / 'java.args').read_text().startswith('-Xmx3g '), r.stderr

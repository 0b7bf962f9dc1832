#!/usr/bin/env python3
"""Stand-in for `rdf-bulkload load` built on Jena's own tdb2.tdbloader -- harness proving only.

    RDF_BULKLOAD_CMD="python3 loader-image/tests/standin_jena.py" pytest loader-image/tests/test_w3c.py

Used to check that the W3C suite reads its manifests and compares evaluation results
correctly (Jena is a conforming parser), before the real loader exists. It builds into
DB.standin-tmp and renames into place; a parse error is reported as `FILE:LINE:COL: reason`
with exit 3 (taken from Jena's "[line: L, col: C ]" message). Options are accepted and ignored.
Needs JENA_HOME (default: the cache path hack/install-jena.sh uses).
"""
import os
import re
import shutil
import subprocess
import sys

VALUED = {'--on-error', '--max-rejects', '--rejects', '--report', '--tmpdir', '--memory', '--threads'}
CACHE = os.environ.get('RDF_BULKLOAD_CACHE') or os.path.expanduser('~/.cache/rdf-bulkload')
JENA_HOME = os.environ.get('JENA_HOME') or os.path.join(CACHE, 'jena-5.6.0', 'apache-jena-5.6.0')


def main(argv):
    if not argv or argv[0] != 'load':
        return 2
    loc, files, i = None, [], 1
    while i < len(argv):
        a = argv[i]
        if a == '--loc':
            loc = argv[i + 1]; i += 2
        elif a in VALUED:
            i += 2
        elif a.startswith('--'):
            i += 1
        else:
            files.append(a); i += 1
    if not loc or not files:
        return 2
    for f in files:
        if not os.path.exists(f):
            print('%s: no such file' % f, file=sys.stderr)
            return 4
    build = loc.rstrip('/') + '.standin-tmp'
    shutil.rmtree(build, ignore_errors=True)
    # one file at a time, so an error names its file (tdbloader appends into one database)
    for f in files:
        r = subprocess.run([os.path.join(JENA_HOME, 'bin', 'tdb2.tdbloader'), '--loc', build, f],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           env=dict(os.environ, JENA_HOME=JENA_HOME, JVM_ARGS='-Xmx512m'))
        if r.returncode != 0 or re.search(r'\bERROR\b', r.stdout):
            shutil.rmtree(build, ignore_errors=True)
            m = re.search(r'\[line: (\d+), col: (\d+)\s*\]\s*(.*)', r.stdout)
            if m:
                print('%s:%s:%s: %s' % (f, m.group(1), m.group(2), m.group(3).strip()), file=sys.stderr)
                return 3
            sys.stderr.write(r.stdout)
            return 70
    for junk in ('tdb.lock',):
        for d in (build, os.path.join(build, 'Data-0001')):
            if os.path.exists(os.path.join(d, junk)):
                os.remove(os.path.join(d, junk))
    os.rename(build, loc)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""Stand-in for `rdf-bulkload load` while the real loader is being written -- harness proving only.

    RDF_BULKLOAD_CMD="python3 loader-image/tests/standin_refwriter.py" pytest loader-image/tests ...

Translates `load --loc DB [options] FILE...` into ../shared/tools/tdb2-reference-writer.py
(a spec-following model that reproduces tdb2.xloader byte for byte on blank-node-free
N-Triples/N-Quads). It supports only that: plain or .gz N-Triples/N-Quads, options are
accepted and ignored, no report, no Turtle/TriG, no skip mode. Tests of anything else are
expected to fail under it; that is the point of using it only to validate the harness.
"""
import gzip
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
WRITER = os.path.normpath(os.path.join(HERE, '..', '..', '..', 'shared', 'tools', 'tdb2-reference-writer.py'))
VALUED = {'--on-error', '--max-rejects', '--rejects', '--report', '--tmpdir', '--memory', '--threads'}


def main(argv):
    if not argv or argv[0] != 'load':
        print('usage: standin_refwriter.py load --loc DB FILE...', file=sys.stderr)
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
    tmp = tempfile.mkdtemp(prefix='standin-')
    try:
        plain = []
        for n, f in enumerate(files):
            if f.endswith('.gz'):
                out = os.path.join(tmp, '%d-%s' % (n, os.path.basename(f)[:-3]))
                with gzip.open(f, 'rb') as src, open(out, 'wb') as dst:
                    shutil.copyfileobj(src, dst)
                plain.append(out)
            else:
                plain.append(f)
        build = loc.rstrip('/') + '.standin-tmp'
        shutil.rmtree(build, ignore_errors=True)
        r = subprocess.run([sys.executable, WRITER, build] + plain, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            shutil.rmtree(build, ignore_errors=True)
            sys.stderr.write(r.stderr)
            return 3
        os.rename(build, loc)
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))

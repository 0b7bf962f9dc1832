#!/usr/bin/env python3
"""Scrape a real loader run: `rdf-bulkload load --metrics-addr` on a synthetic N-Triples file,
/metrics polled while it runs; every scrape is appended to OUT (text format). make test-alerts
checks the metric names of the chart's rules and dashboard against it.

Usage: scrape_loader.py LOADER OUT [TRIPLES]
The load must be scraped at least twice, the last time after its parse phase (so the per-phase
durations exist); otherwise exit 1.
"""
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request


def main():
    loader, out = sys.argv[1], sys.argv[2]
    triples = int(sys.argv[3]) if len(sys.argv) > 3 else 400000
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, 'in.nt')
        with open(src, 'w') as f:
            for i in range(triples):
                f.write('<http://example.org/s%d> <http://example.org/p%d> "object %d" .\n' % (i // 3, i % 7, i))
        s = socket.socket()
        s.bind(('127.0.0.1', 0))
        port = s.getsockname()[1]
        s.close()
        p = subprocess.Popen([loader, 'load', '--loc', os.path.join(tmp, 'db'), '--metrics-addr', '127.0.0.1:%d' % port, src],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        scrapes = []
        while p.poll() is None:
            try:
                with urllib.request.urlopen('http://127.0.0.1:%d/metrics' % port, timeout=2) as r:
                    scrapes.append(r.read().decode())
            except OSError:
                pass
            time.sleep(0.02)
        err = p.stderr.read()
        if p.returncode != 0:
            sys.exit('loader exited %d:\n%s' % (p.returncode, err))
    after_parse = [t for t in scrapes if 'rdf_bulkload_load_phase_duration_seconds{' in t]
    if len(scrapes) < 2 or not after_parse:
        sys.exit('scraped the loader %d times, %d after its parse phase: use more triples' % (len(scrapes), len(after_parse)))
    with open(out, 'w') as f:
        f.write('\n'.join(scrapes))
    print('scrape_loader: %d scrapes of a %d-triple load into %s' % (len(scrapes), triples, out))


if __name__ == '__main__':
    main()

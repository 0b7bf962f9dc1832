#!/usr/bin/env python3
"""Load speed by input format and thread count (`make bench-formats`), in one run.

The same data as gzipped N-Triples, bzip2 N-Triples and one Turtle file (written here with
prefixes and `;` lists), gzipped and as bzip2 (as DBpedia publishes it), each loaded with `--threads 1` and with every core, beside
the decompressors alone on the same file: `gzip -dc`, `bzip2 -dc` and `lbzip2 -d` (parallel
bzip2, from Debian's package, unpacked into the cache). `--threads 1` runs pinned to one core
(`taskset`), so that the speed-up compares one core with all of them. Reported per case:
wall seconds, the ratio to the decompressor floor, the speed-up of all threads over one, peak
RSS against `--memory`, CPU seconds per million triples, the seconds of each phase of the load
(from its `phase_done` events: where the time goes), and whether the databases are the same: node
table and indexes byte-identical across formats (prefix tables differ by design: Turtle
declares prefixes), and byte-identical between thread counts.
"""

import argparse
import gzip
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.environ.get("RDF_BULKLOAD_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "rdf-bulkload")
SHARED = os.path.join(os.path.dirname(REPO), "shared")

NAMESPACES = [
    ("rdf", "http://www.w3.org/1999/02/22-rdf-syntax-ns#"),
    ("rdfs", "http://www.w3.org/2000/01/rdf-schema#"),
    ("xsd", "http://www.w3.org/2001/XMLSchema#"),
    ("dc", "http://purl.org/dc/elements/1.1/"),
    ("rev", "http://purl.org/stuff/rev#"),
    ("foaf", "http://xmlns.com/foaf/0.1/"),
    ("bsbm", "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/"),
    ("bsbm-inst", "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/instances/"),
]
LOCAL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
LINE = re.compile(r"(\S+) (\S+) (.*) \.\s*\Z")
TYPED = re.compile(r'(".*")\^\^<([^>]*)>\Z')


def log(msg):
    print("[bench-formats %s] %s" % (time.strftime("%H:%M:%S"), msg), file=sys.stderr, flush=True)


def abbreviate(term):
    """A Turtle form of an N-Triples term: prefixed names where the local part allows."""
    if term.startswith("<") and term.endswith(">"):
        iri = term[1:-1]
        for p, ns in NAMESPACES:
            if iri.startswith(ns) and LOCAL.match(iri[len(ns):]):
                return "%s:%s" % (p, iri[len(ns):])
        return term
    m = TYPED.match(term)
    if m:
        return "%s^^%s" % (m.group(1), abbreviate("<%s>" % m.group(2)))
    return term


def write_turtle(nt_gz, ttl_gz):
    """N-Triples (one statement per line, subjects grouped as BSBM writes them) as Turtle."""
    tmp = ttl_gz + ".tmp"
    with gzip.open(nt_gz, "rt", encoding="utf-8") as src, gzip.open(tmp, "wt", encoding="utf-8",
                                                                     compresslevel=6) as out:
        for p, ns in NAMESPACES:
            out.write("@prefix %s: <%s> .\n" % (p, ns))
        subject = None
        for line in src:
            if not line.strip() or line.startswith("#"):
                continue
            m = LINE.match(line)
            if not m:
                raise ValueError("not an N-Triples line: %r" % line[:200])
            s, p, o = m.groups()
            s = abbreviate(s)
            pred = "a" if p == "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>" else abbreviate(p)
            if s == subject:
                out.write(" ;\n    %s %s" % (pred, abbreviate(o)))
            else:
                if subject is not None:
                    out.write(" .\n")
                out.write("%s %s %s" % (s, pred, abbreviate(o)))
                subject = s
        if subject is not None:
            out.write(" .\n")
    os.replace(tmp, ttl_gz)


def ensure_inputs(nt_gz, work):
    name = os.path.basename(nt_gz).split(".")[0]
    bz2 = os.path.join(work, name + ".nt.bz2")
    ttl = os.path.join(work, name + ".ttl.gz")
    ttl_bz2 = os.path.join(work, name + ".ttl.bz2")
    if not os.path.exists(bz2):
        log("writing %s" % bz2)
        subprocess.run(["bash", "-c", "set -o pipefail; gzip -dc '%s' | bzip2 -9 > '%s.tmp'" % (nt_gz, bz2)],
                       check=True)
        os.replace(bz2 + ".tmp", bz2)
    if not os.path.exists(ttl):
        log("writing %s" % ttl)
        write_turtle(nt_gz, ttl)
    if not os.path.exists(ttl_bz2):
        log("writing %s" % ttl_bz2)
        subprocess.run(["bash", "-c", "set -o pipefail; gzip -dc '%s' | bzip2 -9 > '%s.tmp'" % (ttl, ttl_bz2)],
                       check=True)
        os.replace(ttl_bz2 + ".tmp", ttl_bz2)
    return {"nt.gz": nt_gz, "nt.bz2": bz2, "ttl.gz": ttl, "ttl.bz2": ttl_bz2}


def ensure_lbzip2():
    """lbzip2 from Debian's package, unpacked into the cache (no root, no install)."""
    found = shutil.which("lbzip2")
    if found:
        return found
    root = os.path.join(CACHE, "lbzip2-deb")
    binary = os.path.join(root, "usr", "bin", "lbzip2")
    if os.path.exists(binary):
        return binary
    os.makedirs(root, exist_ok=True)
    r = subprocess.run(["apt-get", "download", "-qq", "-o", "APT::Sandbox::User=root", "lbzip2"], cwd=root,
                       capture_output=True, text=True)
    debs = [f for f in os.listdir(root) if f.endswith(".deb")]
    if r.returncode != 0 or not debs:
        log("lbzip2 unavailable (apt-get download lbzip2: %s)" % r.stderr.strip()[-300:])
        return None
    subprocess.run(["dpkg-deb", "-x", os.path.join(root, debs[0]), root], check=True)
    return binary


def timed(argv, stdout=subprocess.DEVNULL):
    """Wall seconds, CPU seconds and peak RSS of one child process (its own rusage)."""
    with open(os.devnull, "w") if stdout is subprocess.DEVNULL else stdout as out, \
            tempfile.TemporaryFile("w+") as err:
        t = time.perf_counter()
        p = subprocess.Popen(argv, stdout=out, stderr=err)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t
        p.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        text = err.read()
    if p.returncode != 0:
        raise RuntimeError("%s exited %d: %s" % (argv[0], p.returncode, text[-2000:]))
    return {"wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "rss": ru.ru_maxrss * 1024, "stderr": text}


def digests(db, with_prefixes):
    out = {}
    data = os.path.join(db, "Data-0001")
    for f in sorted(os.listdir(data)):
        if not with_prefixes and f.startswith(("prefixes", "GPU")):
            continue
        if f in ("tdb.lock",):
            continue
        with open(os.path.join(data, f), "rb") as fh:
            out[f] = hashlib.md5(fh.read()).hexdigest()
    return out


def parse_size(text):
    m = re.fullmatch(r"(\d+)(Mi|Gi)B?", text)
    if not m:
        raise argparse.ArgumentTypeError("SIZE like 512Mi or 2Gi")
    return int(m.group(1)) << (20 if m.group(2) == "Mi" else 30)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", default=os.path.join(SHARED, "datasets", "bsbm-1m.nt.gz"),
                    help="gzipped N-Triples (e.g. a bench-data bsbm-xK.nt.gz)")
    ap.add_argument("--workdir", default=os.path.join(CACHE, "bench-formats"))
    ap.add_argument("--results", default=os.path.join(REPO, "bench", "results"))
    ap.add_argument("--rdf-bulkload-bin", default=os.environ.get("RDF_BULKLOAD") or os.path.join(
        REPO, "loader-image", "target", "release", "rdf-bulkload"))
    ap.add_argument("--memory", default="2GiB", help="--memory of every load (peak RSS is checked against it)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per case, the fastest is reported")
    args = ap.parse_args(argv)
    budget = parse_size(args.memory)

    name = os.path.basename(args.dataset).split(".")[0]
    work = os.path.join(args.workdir, name)
    os.makedirs(work, exist_ok=True)
    inputs = ensure_inputs(args.dataset, work)
    lbzip2 = ensure_lbzip2()
    cores = os.cpu_count()
    floors = {"nt.gz": [("gzip -dc", ["gzip", "-dc"])], "nt.bz2": [("bzip2 -dc", ["bzip2", "-dc"])],
              "ttl.gz": [("gzip -dc", ["gzip", "-dc"])], "ttl.bz2": [("bzip2 -dc", ["bzip2", "-dc"])]}
    if lbzip2:
        for fmt in ("nt.bz2", "ttl.bz2"):
            floors[fmt].append(("lbzip2 -d -n %d" % cores, [lbzip2, "-d", "-c", "-n", str(cores)]))

    rows, dbs = [], {}
    statements = None
    for fmt, path in inputs.items():
        floor_walls = {}
        for label, cmd in floors[fmt]:
            best = min((timed(cmd + [path]) for _ in range(args.repeat)), key=lambda r: r["wall"])
            floor_walls[label] = best["wall"]
            rows.append({"case": "%s: %s" % (fmt, label), "wall": best["wall"], "cpu": best["cpu"]})
        for threads in sorted({1, cores}):
            db = os.path.join(work, "db-%s-%d" % (fmt.replace(".", "-"), threads))
            best = None
            for _ in range(args.repeat):
                shutil.rmtree(db, ignore_errors=True)
                # One thread runs on one core: the loader's reader thread would otherwise
                # overlap decompression with parsing on the second core, and the speed-up
                # would not compare one core with all of them.
                pin = ["taskset", "-c", "0"] if threads == 1 else []
                r = timed(pin + [args.rdf_bulkload_bin, "load", "--loc", db, "--threads", str(threads), "--memory",
                                 args.memory, "--progress-interval", "600", path])
                if best is None or r["wall"] < best["wall"]:
                    best = r
            counts = re.findall(r'"statements":(\d+)', best["stderr"])  # the summary line is last
            phases = dict((m[0], float(m[1])) for m in re.findall(
                r'"event":"phase_done","phase":"(\w+)","seconds":([0-9.]+)', best["stderr"]))
            statements = int(counts[-1]) if counts else statements
            dbs[(fmt, threads)] = db
            label = "%s: rdf-bulkload --threads %d%s" % (fmt, threads, " (one core)" if threads == 1 else "")
            row = {"case": label, "wall": best["wall"], "cpu": best["cpu"],
                   "rss": best["rss"], "threads": threads, "fmt": fmt, "phases": phases}
            row["floors"] = {k: best["wall"] / v for k, v in floor_walls.items()}
            rows.append(row)

    # Same database whatever the format and thread count.
    reference = digests(dbs[("nt.gz", 1)], with_prefixes=False)
    same = {}
    for (fmt, threads), db in dbs.items():
        same[(fmt, threads)] = digests(db, with_prefixes=False) == reference
        if threads != 1:
            same[(fmt, threads)] &= digests(db, True) == digests(dbs[(fmt, 1)], True)

    out = ["# Load speed by format and threads: %s" % name, "",
           "- %s statements; `--memory %s`; %d cores; fastest of %d run(s); %s" % (
               "{:,}".format(statements or 0), args.memory, cores, args.repeat, time.strftime("%Y-%m-%d %H:%M UTC",
                                                                                               time.gmtime())), "",
           "| case | wall s | CPU s | CPU s / M triples | peak RSS MiB | × decompressor alone | "
           "speed-up over 1 thread | parse / nodes / indexes s | same database |",
           "|---|---:|---:|---:|---:|---|---:|---|---|"]
    ones = {r["fmt"]: r["wall"] for r in rows if r.get("threads") == 1}
    for r in rows:
        if "threads" not in r:
            out.append("| %s | %.2f | %.2f | | | | | | |" % (r["case"], r["wall"], r["cpu"]))
            continue
        per_m = r["cpu"] / (statements / 1e6) if statements else 0
        rss = r["rss"] / 2**20
        over = " (over budget)" if r["rss"] > budget * 1.1 else ""
        fl = ", ".join("%.2f %s" % (v, k) for k, v in r["floors"].items())
        ph = " / ".join("%.2f" % r["phases"].get(k, 0.0) for k in ("parse", "nodes", "indexes"))
        out.append("| %s | %.2f | %.2f | %.2f | %.0f%s | %s | %.2f | %s | %s |" % (
            r["case"], r["wall"], r["cpu"], per_m, rss, over, fl, ones[r["fmt"]] / r["wall"], ph,
            "yes" if same[(r["fmt"], r["threads"])] else "**no**"))
    # One Turtle file against the same data as N-Triples, same compression, every core.
    alls = {r["fmt"]: r["wall"] for r in rows if r.get("threads") == cores}
    pairs = [(t, n) for t, n in (("ttl.gz", "nt.gz"), ("ttl.bz2", "nt.bz2")) if t in alls and n in alls]
    if pairs:
        out += ["", "Turtle over N-Triples (%d threads): %s" % (cores, ", ".join(
            "%s / %s = %.2f" % (t, n, alls[t] / alls[n]) for t, n in pairs))]
    text = "\n".join(out) + "\n"
    os.makedirs(args.results, exist_ok=True)
    path = os.path.join(args.results, "formats-%s-%s.md" % (name, time.strftime("%Y%m%d-%H%M%S")))
    with open(path, "w") as f:
        f.write(text)
    print(text)
    log("report: %s" % path)
    return 0 if all(same.values()) else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Side-by-side bulk-load benchmark: rdf-bulkload against Jena 5.6.0's TDB2 loaders and
Oxigraph's bulk loader, on the same gzipped N-Triples input, in one run.

    python3 bench/run.py --dataset bsbm-1m                       # all tools, one run each
    python3 bench/run.py --dataset bsbm-x10,bsbm-x50 --memory bsbm-x50=2Gi --skip-slow bsbm-x50
    python3 bench/run.py --help

Per tool and dataset it reports wall time, triples/s, wall / `gzip -dc` floor, how many
times faster rdf-bulkload is than each anchor, CPU time, peak RSS of the whole process
tree, temp and work disk peaks, and the final database size; results go to
bench/results/<dataset>-<timestamp>.{md,json}. See bench/README.md for what each column
means and how it is measured.

Datasets: `bsbm-1m` is ../shared/datasets/bsbm-1m.nt.gz (real BSBM generator output);
`bsbm-xK` is a synthetic K-fold scale-up of it made by scale-nt.py (K disjoint renamed
copies) and cached under $RDF_BULKLOAD_CACHE/bench-data/; `wikidata-N` (N: 1e6, 10^8, ...) is
a Wikidata-shaped Turtle dump of N triples written by the wikigen generator (the shapes of
latest-all.ttl), cached there too, and loaded by Oxigraph with --lenient; any other value is a
path.
"""
import argparse
import datetime as dt
import hashlib
import json
import os
import platform
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.environ.get("RDF_BULKLOAD_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "rdf-bulkload")
SHARED = os.path.join(os.path.dirname(REPO), "shared")
JENA_HOME_DEFAULT = os.path.join(CACHE, "jena-5.6.0", "apache-jena-5.6.0")
REQUIREMENTS = os.path.join(REPO, "bench", "requirements.txt")

ALL_TOOLS = (bl.GZIP_FLOOR, bl.RDF_BULKLOAD) + bl.ANCHORS
OPTIONAL_TOOLS = ("pyoxigraph",)
# Anchors that --skip-slow leaves out: xloader runs at ~40-50K triples/s here, 3-6 times
# slower than the other anchors, and would dominate a large run.
SLOW_TOOLS = ("tdb2-xloader",)

TOOL_LABELS = {
    bl.GZIP_FLOOR: "gzip -dc > /dev/null (floor)",
    bl.RDF_BULKLOAD: "rdf-bulkload",
    "tdb2-xloader": "Jena tdb2.xloader",
    "tdb2-phased": "Jena tdb2.tdbloader --loader=phased",
    "tdb2-parallel": "Jena tdb2.tdbloader --loader=parallel",
    "oxigraph": "Oxigraph CLI `oxigraph load` (bulk loader)",
    "pyoxigraph": "pyoxigraph Store.bulk_load",
}

# The rdf-bulkload command line; {memory_opt} becomes "--memory SIZE" or nothing.
RDF_BULKLOAD_CMD_DEFAULT = "{bin} load --loc {db} --tmpdir {tmp} {memory_opt} {input}"

PYOXIGRAPH_SCRIPT = r"""
import gzip, sys
from pyoxigraph import RdfFormat, Store
db, path = sys.argv[1], sys.argv[2]
opener = gzip.open if path.endswith(".gz") else open
with opener(path, "rb") as f:
    Store(db).bulk_load(f, RdfFormat.N_TRIPLES)
"""


def log(msg):
    print("[bench %s] %s" % (time.strftime("%H:%M:%S"), msg), file=sys.stderr, flush=True)


# ---------------------------------------------------------------- datasets

def resolve_dataset(name, data_dir, scale_tool, args=None):
    """-> dict(name, path, synthetic, description); generates bsbm-xK and wikidata-N on first use."""
    base = os.path.join(SHARED, "datasets", "bsbm-1m.nt.gz")
    if name == "bsbm-1m":
        return {"name": name, "path": base, "synthetic": False,
                "description": "BSBM, official generator, 2,785 products (../shared/datasets/bsbm-1m.nt.gz)"}
    m = re.fullmatch(r"bsbm-x(\d+)", name)
    if m:
        k = int(m.group(1))
        path = os.path.join(data_dir, name + ".nt.gz")
        if not os.path.exists(path):
            generate_scaled(base, k, path, scale_tool)
        return {"name": name, "path": path, "synthetic": True,
                "description": "%d disjoint renamed copies of bsbm-1m made by "
                               "scale-nt.py (same shape and term mix, ~%dx the distinct terms); "
                               "not BSBM generator output at that scale" % (k, k)}
    m = re.fullmatch(r"wikidata-(\S+)", name)
    if m:
        return generate_wikidata(bl.parse_count(m.group(1)), data_dir, args)
    if os.path.exists(name):
        return {"name": os.path.basename(name).split(".")[0], "path": os.path.abspath(name),
                "synthetic": False, "description": os.path.abspath(name)}
    sys.exit("unknown dataset %r: bsbm-1m, bsbm-xK or a path" % name)


def generate_scaled(base, k, path, scale_tool):
    if not os.path.exists(scale_tool):
        sys.exit("cannot make %s: %s not found" % (path, scale_tool))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    log("generating %s (%d copies of %s, gzip -1); this takes a while" % (path, k, base))
    cmd = "set -o pipefail; nice -n 10 %s %s %s %d | nice -n 10 gzip -1 > %s" % (
        shlex.quote(sys.executable), shlex.quote(scale_tool), shlex.quote(base), k, shlex.quote(tmp))
    subprocess.run(["bash", "-c", cmd], check=True)
    os.replace(tmp, path)


def generate_wikidata(triples, data_dir, args):
    """The wikigen dump of `triples` triples (gzipped Turtle), made once per generator version,
    seed and size; its statement count is the generator's own (Turtle has no line per triple)."""
    binary = args.wikigen_bin
    if not os.access(binary, os.X_OK):
        sys.exit("cannot make a wikidata dataset: %s not found (make loader)" % binary)
    version = subprocess.run([binary, "--version"], check=True, capture_output=True, text=True).stdout.strip()
    tag = re.sub(r"[^A-Za-z0-9.]+", "_", version)
    base = os.path.join(data_dir, "wikidata-%s-seed%d-%s" % (bl.short_count(triples), args.wikidata_seed, tag))
    path, stats = base + ".ttl.gz", base + ".stats.json"
    if not (os.path.exists(path) and os.path.exists(stats)):
        os.makedirs(data_dir, exist_ok=True)
        log("generating %s (%s triples, wikigen seed %d)" % (path, "{:,}".format(triples), args.wikidata_seed))
        subprocess.run(["nice", "-n", "10", binary, "--triples", str(triples), "--seed", str(args.wikidata_seed),
                        "--stats", stats + ".tmp", path], check=True)
        os.replace(stats + ".tmp", stats)
    with open(stats) as f:
        st = json.load(f)
    c = st["counts"]
    return {"name": "wikidata-%s" % bl.short_count(triples), "path": path, "synthetic": True, "lenient": True,
            "triples": st["triples"], "generator": st,
            "description": "Wikidata-shaped Turtle written by wikigen (%s, seed %d; the shapes of latest-all.ttl: "
                           "%s items, %s lexemes, %s statements, %s labels in hundreds of languages, %s chunk "
                           "headers; %s literals with a language tag BCP 47 refuses and %s IRIs with a bad "
                           "percent-encoding, which Jena keeps with a warning), not Wikidata itself" % (
                               version, args.wikidata_seed, "{:,}".format(c["items"]), "{:,}".format(c["lexemes"]),
                               "{:,}".format(c["statements"]), "{:,}".format(c["labels"]), c["headers"],
                               "{:,}".format(c["lang_not_bcp47"]), "{:,}".format(c["bad_iris"]))}


def count_triples(path, data_dir):
    """Statements in the file (non-blank, non-comment lines), cached by path/size/mtime."""
    st = os.stat(path)
    key = "%s|%d|%d" % (os.path.realpath(path), st.st_size, int(st.st_mtime))
    cache_file = os.path.join(data_dir, "triple-counts.json")
    try:
        with open(cache_file) as f:
            cache = json.load(f)
    except (OSError, ValueError):
        cache = {}
    if key in cache:
        return cache[key]
    log("counting statements in %s" % path)
    out = subprocess.run(["bash", "-c", "set -o pipefail; gzip -dc %s | LC_ALL=C grep -cvE '^[[:space:]]*(#|$)'"
                          % shlex.quote(path)], check=True, capture_output=True, text=True).stdout
    n = int(out.strip())
    cache[key] = n
    os.makedirs(data_dir, exist_ok=True)
    with open(cache_file + ".tmp", "w") as f:
        json.dump(cache, f, indent=1)
    os.replace(cache_file + ".tmp", cache_file)
    return n


# ---------------------------------------------------------------- tools

def tool_command(tool, args, input_path, db, tmp, memory, lenient=False):
    """-> (argv, extra env, stdout target) for one run. `lenient`: the dataset holds terms
    Jena keeps with a warning (language tags BCP 47 refuses, bad IRIs), which Oxigraph loads
    only with --lenient."""
    jena_bin = os.path.join(args.jena_home, "bin")
    jvm = {"JVM_ARGS": "%s -Djava.io.tmpdir=%s" % (args.jvm_args, tmp), "JENA_HOME": args.jena_home}
    if tool == bl.GZIP_FLOOR:
        return ["gzip", "-dc", input_path], {}, subprocess.DEVNULL
    if tool == bl.RDF_BULKLOAD:
        line = args.rdf_bulkload_cmd.format(
            bin=shlex.quote(args.rdf_bulkload_bin), db=shlex.quote(db), tmp=shlex.quote(tmp),
            input=shlex.quote(input_path), threads=os.cpu_count(),
            memory_opt=("--memory " + shlex.quote(memory)) if memory else "")
        return shlex.split(line), {}, None
    if tool == "tdb2-xloader":
        return [os.path.join(jena_bin, "tdb2.xloader"), "--loc", db, "--tmpdir", tmp, input_path], jvm, None
    if tool in ("tdb2-phased", "tdb2-parallel"):
        return [os.path.join(jena_bin, "tdb2.tdbloader"), "--loader=" + tool.split("-")[1],
                "--loc", db, input_path], jvm, None
    if tool == "oxigraph":
        argv = [args.oxigraph_bin, "load", "--location", db, "--file", input_path]
        return argv + (["--lenient"] if args.oxigraph_lenient or lenient else []), {}, None
    if tool == "pyoxigraph":
        return [os.path.join(args.bench_venv, "bin", "python"), "-c", PYOXIGRAPH_SCRIPT, db, input_path], {}, None
    raise ValueError(tool)


def default_venv():
    """$CACHE/bench-venv-<digest of requirements.txt>: a new pin makes a new venv."""
    with open(REQUIREMENTS, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:12]
    return os.path.join(CACHE, "bench-venv-" + digest)


def ensure_venv(venv):
    """Creates the venv with the pinned anchors from PyPI unless it is complete already."""
    if os.path.exists(os.path.join(venv, ".complete")):
        return
    log("creating %s from %s" % (venv, os.path.relpath(REQUIREMENTS, REPO)))
    shutil.rmtree(venv, ignore_errors=True)  # one without .complete is half-made
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    subprocess.run([os.path.join(venv, "bin", "python"), "-m", "pip", "install", "-q",
                    "--disable-pip-version-check", "--no-input", "-r", REQUIREMENTS], check=True)
    open(os.path.join(venv, ".complete"), "w").close()


def tool_available(tool, args):
    """None when the tool can run, else why not."""
    need = {
        bl.GZIP_FLOOR: shutil.which("gzip"),
        bl.RDF_BULKLOAD: args.rdf_bulkload_bin if os.access(args.rdf_bulkload_bin, os.X_OK) else None,
        "oxigraph": args.oxigraph_bin if os.access(args.oxigraph_bin, os.X_OK) else None,
        "pyoxigraph": os.path.join(args.bench_venv, "bin", "python")
        if os.path.exists(os.path.join(args.bench_venv, "bin", "python")) else None,
    }
    if tool.startswith("tdb2-"):
        script = os.path.join(args.jena_home, "bin", "tdb2.xloader" if tool == "tdb2-xloader" else "tdb2.tdbloader")
        return None if os.access(script, os.X_OK) else "%s missing (make tools-jena)" % script
    if not need.get(tool):
        return {bl.RDF_BULKLOAD: "%s missing (make loader)" % args.rdf_bulkload_bin,
                "oxigraph": "%s missing (pip install -r bench/requirements.txt)" % args.oxigraph_bin,
                "pyoxigraph": "no python in %s" % args.bench_venv}.get(tool, "missing")
    return None


def tool_versions(args):
    def first_line(argv, env=None):
        try:
            p = subprocess.run(argv, capture_output=True, text=True, timeout=120,
                               env=dict(os.environ, **(env or {})))
            text = (p.stdout + p.stderr).strip()
            return text.splitlines()[0] if text else None
        except (OSError, subprocess.SubprocessError):
            return None
    out = {
        "rdf-bulkload": first_line([args.rdf_bulkload_bin, "--version"]),
        "jena": first_line([os.path.join(args.jena_home, "bin", "tdb2.tdbloader"), "--version"],
                           {"JENA_HOME": args.jena_home}),
        "java": first_line(["java", "-version"]),
        "oxigraph": first_line([args.oxigraph_bin, "--version"]),
        "gzip": first_line(["gzip", "--version"]),
    }
    try:
        rev = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--", "loader-image"],
                               capture_output=True, text=True).stdout.strip()
        out["repo_commit"] = rev + ("+dirty(loader-image)" if dirty else "")
    except OSError:
        pass
    return out


# ---------------------------------------------------------------- running

def try_drop_caches():
    """sync + drop the page cache; True if the kernel accepted it."""
    os.sync()
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return True
    except OSError:
        return False


def run_once(tool, args, dataset, memory, rep, logs_dir):
    work = os.path.join(args.workdir, tool)
    db, tmp = os.path.join(work, "db"), os.path.join(work, "tmp")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(tmp)  # db is left for the tool to create: xloader refuses an existing one
    argv, env_extra, stdout = tool_command(tool, args, dataset["path"], db, tmp, memory, dataset.get("lenient", False))
    env = dict(os.environ, TMPDIR=tmp, **env_extra)
    dropped = try_drop_caches() if args.drop_caches else False
    log_path = os.path.join(logs_dir, "%s-%d.log" % (tool, rep))
    result = {"tool": tool, "rep": rep, "argv": argv,
              "env": {k: v for k, v in env_extra.items()}, "caches_dropped": dropped,
              "loadavg_before": os.getloadavg()[0], "log": os.path.relpath(log_path, REPO)}
    log("%s run %d: %s" % (tool, rep, " ".join(shlex.quote(a) for a in argv)))
    with open(log_path, "w") as logf:
        logf.write("$ %s\n" % " ".join(shlex.quote(a) for a in argv))
        logf.flush()
        t0 = time.monotonic()
        proc = subprocess.Popen(argv, stdout=stdout if stdout is not None else logf, stderr=logf,
                                stdin=subprocess.DEVNULL, env=env, cwd=work, start_new_session=True)
        poller = bl.TreePoller(proc.pid, interval=args.rss_interval,
                               dirs={"tmp": tmp, "db": db}, disk_interval=args.disk_interval).start()
        try:
            status, rusage, timed_out = wait_with_timeout(proc, args.timeout)
        except BaseException:  # Ctrl-C: leave no loader running behind
            poller.stop()
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            raise
        wall = time.monotonic() - t0
        poller.stop()
    t1 = time.monotonic()
    os.sync()  # what the tool left dirty in the page cache, timed apart from its wall time
    result["sync_s"] = time.monotonic() - t1
    code = os.waitstatus_to_exitcode(status)
    result.update({
        "exit_code": code, "timed_out": timed_out, "wall_s": wall,
        "cpu_s": rusage.ru_utime + rusage.ru_stime,
        "max_single_rss": rusage.ru_maxrss * 1024,
        # A run shorter than one sampling interval may be missed by the poller; then fall back
        # to wait4's ru_maxrss (largest single process; may include the forking harness's pages).
        "peak_rss": poller.peak_rss or rusage.ru_maxrss * 1024, "peak_rss_anon": poller.peak_rss_anon,
        "peak_procs": poller.peak_procs, "rss_samples": poller.samples,
        "tmp_peak": poller.dir_peaks["tmp"], "disk_peak": poller.sum_peak,
        "db_size": bl.dir_usage(db) if os.path.exists(db) else None,
        "db_apparent_size": apparent_size(db),
        "node_data_size": node_data_size(db),
    })
    if tool == bl.RDF_BULKLOAD:
        report = result["loader_report"] = loader_report(db)
        if report:
            result["report_triples"] = report.get("statements", report.get("triples"))
    result["ok"] = code == 0 and not timed_out
    if not result["ok"]:
        result["error"] = "timed out after %ss" % args.timeout if timed_out else "exit code %d (see %s)" % (
            code, result["log"])
    if tool == bl.GZIP_FLOOR:
        result["tmp_peak"] = result["disk_peak"] = result["db_size"] = None
    if args.keep_dbs and result["ok"]:
        kept = os.path.join(args.workdir, "kept", "%s-%s-%d" % (dataset["name"], tool, rep))
        shutil.rmtree(kept, ignore_errors=True)
        os.makedirs(os.path.dirname(kept), exist_ok=True)
        if os.path.exists(db):
            os.rename(db, kept)
            result["kept_db"] = kept
    shutil.rmtree(work, ignore_errors=True)
    log("%s run %d: %s in %.1fs, peak RSS %s, DB %s" % (
        tool, rep, "ok" if result["ok"] else "FAILED", wall, bl.fmt_bytes(result["peak_rss"]),
        bl.fmt_bytes(result["db_size"])))
    return result


def wait_with_timeout(proc, timeout):
    """Reaps proc with wait4 (rusage covers it and the descendants it waited for); kills
    its process group when the timeout passes."""
    deadline = time.monotonic() + timeout if timeout else None
    while True:
        pid, status, rusage = os.wait4(proc.pid, os.WNOHANG if deadline else 0)
        if pid == proc.pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return status, rusage, False
        if deadline and time.monotonic() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            pid, status, rusage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
            return status, rusage, True
        time.sleep(0.05)


def apparent_size(path):
    if not os.path.exists(path):
        return None
    total = 0
    for root, _dirs, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_size
            except OSError:
                pass
    return total


REPORT_FIELDS = ("statements", "triples", "quads", "distinct_terms", "rejects", "threads",
                 "memory_budget_bytes", "dictionary_bytes", "dictionary_spilled_terms",
                 "node_table_bytes", "database_bytes", "temp_disk_peak_bytes", "peak_rss_bytes",
                 "duration_seconds", "phases")


def loader_report(db):
    """The main figures of rdf-bulkload's build report (a JSON file beside Data-0001), or
    None. Its statement count is checked against the input's, so that a loader that
    dropped statements cannot look fast."""
    try:
        names = sorted(n for n in os.listdir(db) if n.endswith(".json") and not n.startswith("Data"))
    except OSError:
        return None
    for name in names:
        try:
            with open(os.path.join(db, name)) as f:
                report = json.load(f)
        except (OSError, ValueError):
            continue
        if isinstance(report, dict) and any(k in report for k in ("statements", "triples")):
            return {k: report[k] for k in REPORT_FIELDS if k in report}
    return None


def node_data_size(db):
    """Size of the TDB2 node table's term file (Data-0001/nodes-data.obj): the encoded
    dictionary, to compare a --memory budget against."""
    p = os.path.join(db, "Data-0001", "nodes-data.obj")
    return os.path.getsize(p) if os.path.exists(p) else None


# ---------------------------------------------------------------- reporting

def render_markdown(meta, rows, order, targets, runs):
    ds = meta["dataset"]
    out = ["# Bulk-load benchmark: %s" % ds["name"], ""]
    if ds.get("generator"):
        out += ["**Synthetic:** %s." % ds["description"], ""]
    elif ds["synthetic"]:
        out += ["**Synthetic scale-up of real data:** %s." % ds["description"], ""]
    else:
        out += ["Dataset: %s." % ds["description"], ""]
    if ds.get("lenient"):
        out += ["Oxigraph runs with `--lenient`: the input holds terms Jena keeps with a warning, which "
                "Oxigraph refuses otherwise.", ""]
    out += ["- input: `%s`, %s gzipped, **%s statements**" % (
        ds["path"], bl.fmt_bytes(ds["size"]), "{:,}".format(ds["triples"])),
        "- when: %s; host: %d cores, %s RAM, %s; load average at start %.2f" % (
            meta["started"], meta["host"]["cores"], bl.fmt_bytes(meta["host"]["mem_total"]),
            meta["host"]["kernel"], meta["host"]["loadavg_start"]),
        "- runs per tool: %d (figures are medians; all runs in the JSON); page cache %s" % (
            meta["repeat"], "dropped before every run (sync; echo 3 > /proc/sys/vm/drop_caches)"
            if meta["caches_dropped"] else "NOT dropped between runs (warm input)"),
        "- JVM loaders: JVM_ARGS=`%s`; rdf-bulkload --memory: %s" % (
            meta["jvm_args"], meta["memory"] or "not set (loader default%s)" % "".join(
                ": " + bl.fmt_bytes(r["loader_report"]["memory_budget_bytes"])
                for r in runs.get(bl.RDF_BULKLOAD, [])[:1]
                if (r.get("loader_report") or {}).get("memory_budget_bytes"))),
        "- versions: %s" % ", ".join("%s: %s" % (k, v) for k, v in meta["versions"].items() if v),
        ""]
    busiest = max([r.get("loadavg_before") or 0 for r in rows.values()] + [meta["host"]["loadavg_start"]])
    if busiest > meta["host"]["cores"]:
        out += ["**Warning: the machine was busy (1-minute load average up to %.1f on %d cores before a "
                "run): every tool was slowed, not necessarily by the same factor; take the figures as noisy.**" % (busiest, meta["host"]["cores"]), ""]
    ours = rows.get(bl.RDF_BULKLOAD, {})
    if ours.get("ok"):
        vs = ["%s %.2f×" % (t, rows[t]["rdf_speedup"]) for t in bl.ANCHORS
              if rows.get(t, {}).get("rdf_speedup") is not None]
        out += ["**rdf-bulkload: %s triples/s, wall %s the gzip floor%s.**" % (
            bl.fmt_rate(ours["triples_per_s"]), bl.fmt_ratio(ours.get("x_floor")),
            ("; speed-up (anchor wall / rdf-bulkload wall) vs " + ", ".join(vs)) if vs else ""), ""]
    out.append(bl.render_table(rows, order))
    out += ["", "Tools: " + "; ".join("`%s` = %s" % (t, TOOL_LABELS[t]) for t in order if t in rows), ""]
    reported = {r.get("report_triples") for r in runs.get(bl.RDF_BULKLOAD, []) if r.get("ok")} - {None}
    if reported and reported != {ds["triples"]}:
        out += ["**Warning: rdf-bulkload's build report counts %s statements, the input has %s.**" % (
            ", ".join("{:,}".format(n) for n in sorted(reported)), "{:,}".format(ds["triples"])), ""]
    reports = [r["loader_report"] for r in runs.get(bl.RDF_BULKLOAD, []) if r.get("ok") and r.get("loader_report")]
    if reports:
        rep = reports[0]
        facts = []
        if "memory_budget_bytes" in rep:
            facts.append("budget %s" % bl.fmt_bytes(rep["memory_budget_bytes"]))
        if "dictionary_bytes" in rep:
            facts.append("dictionary %s" % bl.fmt_bytes(rep["dictionary_bytes"]))
        if "dictionary_spilled_terms" in rep:
            facts.append("%s terms spilled" % "{:,}".format(rep["dictionary_spilled_terms"]))
        if "distinct_terms" in rep:
            facts.append("%s distinct terms" % "{:,}".format(rep["distinct_terms"]))
        if "peak_rss_bytes" in rep:
            facts.append("self-measured peak RSS %s" % bl.fmt_bytes(rep["peak_rss_bytes"]))
        if rep.get("phases"):
            facts.append("phases: " + ", ".join("%s %.1fs" % (p.get("name"), p.get("seconds", 0))
                                                for p in rep["phases"] if isinstance(p, dict)))
        out += ["rdf-bulkload's build report (run 1): " + "; ".join(facts) + ".", ""]
    if targets:
        out += ["## Targets", "", bl.render_targets(targets)]
    failed = [(t, r.get("error")) for t, r in rows.items() if not r.get("ok") and not r.get("skipped")]
    skipped = [(t, r.get("reason")) for t, r in rows.items() if r.get("skipped")]
    if failed or skipped:
        out += ["## Not measured", ""] + ["- %s: FAILED, %s" % f for f in failed] + \
               ["- %s: skipped, %s" % s for s in skipped] + [""]
    out += ["## Columns", "", COLUMNS_HELP]
    return "\n".join(out)


COLUMNS_HELP = """\
- **wall s**: elapsed time from starting the tool's command to its exit (median of the runs).
  The `sync` of what it left dirty in the page cache afterwards is timed apart (`sync_s` in the JSON).
- **triples/s**: statements in the input (non-blank, non-comment lines; for a generated wikidata-N
  dump, the generator's count) / wall s.
- **× gzip floor**: wall s / wall s of `gzip -dc FILE > /dev/null` on the same file (1.00× would be
  as fast as just decompressing the input).
- **rdf-bulkload speed-up**: on each anchor's row, that anchor's wall s / rdf-bulkload's wall s
  (how many times faster rdf-bulkload is; below 1.00× it is slower).
- **CPU s**: user + system CPU time of the tool and all its descendants (wait4 rusage).
- **peak RSS (tree)**: the largest sum of VmRSS over the tool's process tree (the process, all its
  descendants, and anything else in its session: xloader's JVMs and `sort`), sampled from /proc every
  `rss_interval` seconds; short spikes between samples are missed. RSS includes file pages the tool
  has mapped (TDB2 and RocksDB mmap their files), so it is an upper bound on what it needs.
- **peak anon RSS**: the same sum over RssAnon (heap, stacks, anonymous mmaps: memory that cannot be
  dropped as page cache).
- **temp disk peak**: the largest allocated size (like `du`) of the tool's temp dir (its `--tmpdir`,
  `TMPDIR` and `java.io.tmpdir`), polled every `disk_interval` seconds.
- **work disk peak**: the largest allocated size of temp dir + database dir sampled together (tools
  without a temp dir, like tdbloader and Oxigraph, keep their scratch data in the database dir).
- **DB size**: allocated size of the finished database directory.
"""


# ---------------------------------------------------------------- main

def parse_memory(values):
    """['2Gi', 'bsbm-x50=1Gi'] -> {None: '2Gi', 'bsbm-x50': '1Gi'} (checked to be sizes)."""
    out = {}
    for v in values or ():
        ds, _, size = v.rpartition("=")
        bl.parse_size(size)
        out[ds or None] = size
    return out


def parse_per_dataset_list(values):
    """['tdb2-xloader', 'bsbm-x50:tdb2-xloader,oxigraph'] -> {None: {...}, 'bsbm-x50': {...}}"""
    out = {}
    for v in values or ():
        ds, _, tools = v.rpartition(":")
        out.setdefault(ds or None, set()).update(t for t in tools.split(",") if t)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", default="bsbm-1m",
                    help="comma-separated: bsbm-1m, bsbm-xK (synthetic scale-up, generated and cached), "
                         "wikidata-N (a Wikidata-shaped Turtle dump of N triples: 1e6, 10^8; generated and cached), "
                         "or paths")
    ap.add_argument("--tools", default=",".join(ALL_TOOLS),
                    help="comma-separated, run in this order (default: %(default)s; also: pyoxigraph)")
    ap.add_argument("--skip", action="append", default=[], metavar="[DATASET:]TOOL,...",
                    help="tools to leave out, for every dataset or only for DATASET (repeatable)")
    ap.add_argument("--skip-slow", action="append", nargs="?", const="*", default=[], metavar="DATASET",
                    help="leave out the slow anchors (%s), for every dataset or only DATASET" % ", ".join(SLOW_TOOLS))
    ap.add_argument("--memory", action="append", default=[], metavar="[DATASET=]SIZE",
                    help="--memory passed to rdf-bulkload, for every dataset or only DATASET (repeatable)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per tool (round-robin; medians reported)")
    ap.add_argument("--timeout", type=float, default=None, help="seconds before a run is killed")
    ap.add_argument("--jvm-args", default=os.environ.get("BENCH_JVM_ARGS", "-Xmx4G"),
                    help="JVM_ARGS for the Jena loaders (default %(default)s, xloader's own default)")
    ap.add_argument("--no-drop-caches", dest="drop_caches", action="store_false",
                    help="do not drop the page cache before each run")
    ap.add_argument("--rss-interval", type=float, default=0.1, help="seconds between RSS samples")
    ap.add_argument("--disk-interval", type=float, default=0.5, help="seconds between disk samples")
    ap.add_argument("--workdir", default=os.path.join(CACHE, "bench-work"),
                    help="where databases and temp dirs are made (default %(default)s)")
    ap.add_argument("--results", default=os.path.join(REPO, "bench", "results"))
    ap.add_argument("--data-dir", default=os.path.join(CACHE, "bench-data"))
    ap.add_argument("--scale-tool", default=os.path.join(SHARED, "tools", "scale-nt.py"))
    ap.add_argument("--prepare-only", action="store_true",
                    help="only make (and count) the datasets and the venv, run nothing")
    ap.add_argument("--keep-dbs", action="store_true", help="keep the databases under WORKDIR/kept/")
    ap.add_argument("--rdf-bulkload-bin", default=os.environ.get("RDF_BULKLOAD") or os.path.join(
        REPO, "loader-image", "target", "release", "rdf-bulkload"), help="default: $RDF_BULKLOAD or %(default)s")
    ap.add_argument("--rdf-bulkload-cmd", default=os.environ.get("BENCH_RDF_BULKLOAD_CMD", RDF_BULKLOAD_CMD_DEFAULT),
                    help="command template ({bin} {db} {tmp} {input} {memory_opt} {threads}; default %(default)r)")
    ap.add_argument("--jena-home", default=os.environ.get("JENA_HOME_BENCH", JENA_HOME_DEFAULT))
    ap.add_argument("--bench-venv", default=None,
                    help="venv with bench/requirements.txt (default: $RDF_BULKLOAD_CACHE/bench-venv-<digest>, "
                         "made on first use)")
    ap.add_argument("--oxigraph-bin", default=None, help="default: BENCH_VENV/bin/oxigraph")
    ap.add_argument("--oxigraph-lenient", action="store_true",
                    help="pass --lenient to oxigraph load (always for wikidata-N datasets)")
    ap.add_argument("--wikigen-bin", default=os.environ.get("RDF_BULKLOAD_WIKIGEN") or os.path.join(
        REPO, "loader-image", "target", "release", "wikigen"), help="the generator of wikidata-N datasets")
    ap.add_argument("--wikidata-seed", type=int, default=1, help="seed of wikidata-N datasets (default %(default)s)")
    args = ap.parse_args(argv)
    # `kill PID` of the harness stops the running tool too (see run_once).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("bench: terminated"))
    tools = [t for t in args.tools.split(",") if t]
    if args.bench_venv is None:
        args.bench_venv = default_venv()
        if args.oxigraph_bin is None and {"oxigraph", "pyoxigraph"} & set(tools):
            ensure_venv(args.bench_venv)
    args.oxigraph_bin = args.oxigraph_bin or os.path.join(args.bench_venv, "bin", "oxigraph")

    for t in tools:
        if t not in ALL_TOOLS + OPTIONAL_TOOLS:
            ap.error("unknown tool %r (known: %s)" % (t, ", ".join(ALL_TOOLS + OPTIONAL_TOOLS)))
    memory = parse_memory(args.memory)
    skips = parse_per_dataset_list(args.skip)
    for ds in args.skip_slow:
        skips.setdefault(None if ds == "*" else ds, set()).update(SLOW_TOOLS)

    os.makedirs(args.results, exist_ok=True)
    os.makedirs(args.workdir, exist_ok=True)
    versions = {} if args.prepare_only else tool_versions(args)
    drop_ok = args.drop_caches and not args.prepare_only and try_drop_caches()
    if args.drop_caches and not args.prepare_only and not drop_ok:
        log("cannot drop the page cache here (not root?): runs will see a warm cache")
    host = {"cores": os.cpu_count(), "mem_total": meminfo_total(), "kernel": platform.release(),
            "loadavg_start": os.getloadavg()[0]}

    previous = None  # (dataset name, rdf-bulkload triples/s) for the scaling check
    written, all_ok = [], True
    for name in [d for d in args.dataset.split(",") if d]:
        dataset = resolve_dataset(name, args.data_dir, args.scale_tool, args)
        dataset["size"] = os.path.getsize(dataset["path"])
        dataset["triples"] = dataset.get("triples") or count_triples(dataset["path"], args.data_dir)
        if args.prepare_only:
            log("dataset %s ready: %s, %s statements" % (name, dataset["path"], "{:,}".format(dataset["triples"])))
            continue
        mem = memory.get(dataset["name"], memory.get(None))
        skip = skips.get(None, set()) | skips.get(dataset["name"], set())
        stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        base = os.path.join(args.results, "%s-%s" % (dataset["name"], stamp))
        logs_dir = base + "-logs"
        os.makedirs(logs_dir, exist_ok=True)
        log("dataset %s: %s, %s statements%s" % (dataset["name"], dataset["path"],
                                                 "{:,}".format(dataset["triples"]),
                                                 " (synthetic: wikigen)" if dataset.get("generator") else
                                                 " (synthetic scale-up)" if dataset["synthetic"] else ""))
        runs = {t: [] for t in tools}
        rows = {}
        for t in tools:
            why = "asked (--skip/--skip-slow)" if t in skip else tool_available(t, args)
            if why:
                rows[t] = {"skipped": True, "ok": False, "reason": why}
                log("%s: skipped, %s" % (t, why))
        for rep in range(1, args.repeat + 1):
            for t in tools:
                if t not in rows:
                    runs[t].append(run_once(t, args, dataset, mem if t == bl.RDF_BULKLOAD else None,
                                            rep, logs_dir))
        for t in tools:
            if t not in rows:
                rows[t] = bl.summarise_runs(runs[t])
        speedups = bl.compute_ratios(rows, dataset["triples"])
        targets = bl.check_targets(rows, bl.parse_size(mem) if mem else None)
        ours = rows.get(bl.RDF_BULKLOAD, {})
        reports = [r["loader_report"] for r in runs.get(bl.RDF_BULKLOAD, []) if r.get("ok") and r.get("loader_report")]
        if mem and reports and "dictionary_spilled_terms" in reports[0]:
            v = reports[0]["dictionary_spilled_terms"]
            targets.append(("dictionary terms spilled under --memory %s (spill exercised)" % mem, v, "> 0", v > 0))
        if mem and previous and ours.get("ok") and previous[1]:
            v = ours["triples_per_s"] / previous[1]
            targets.append(("triples/s / %s triples/s (flat scaling)" % previous[0], v, ">= 0.9", v >= 0.9))
        if ours.get("ok"):
            previous = (dataset["name"], ours["triples_per_s"])
        meta = {"dataset": dataset, "started": stamp, "host": host, "repeat": args.repeat,
                "caches_dropped": bool(drop_ok), "jvm_args": args.jvm_args, "memory": mem,
                "versions": versions, "rss_interval": args.rss_interval, "disk_interval": args.disk_interval,
                "rdf_bulkload_cmd": args.rdf_bulkload_cmd}
        md = render_markdown(meta, rows, tools, targets, runs)
        with open(base + ".md", "w") as f:
            f.write(md)
        with open(base + ".json", "w") as f:
            json.dump({"meta": meta, "summary": rows, "rdf_bulkload_speedup": speedups,
                       "targets": [{"name": n, "value": v, "wanted": w, "met": p} for n, v, w, p in targets],
                       "runs": runs}, f, indent=2)
        written += [base + ".md", base + ".json"]
        all_ok = all_ok and all(r.get("ok") or r.get("skipped") for r in rows.values())
        print(md)
    if written:
        log("wrote " + ", ".join(os.path.relpath(p, REPO) for p in written))
    return 0 if all_ok else 1


def meminfo_total():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    return None


if __name__ == "__main__":
    sys.exit(main())

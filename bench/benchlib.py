"""Measurement and reporting parts of the benchmark harness (stdlib only).

Kept apart from run.py so that bench/test_benchlib.py can check them without Jena,
Oxigraph or a loader: ratio arithmetic, size parsing and formatting, the Markdown table,
and the process-tree RSS / directory-size poller.
"""
import os
import re
import statistics
import threading
import time

PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")

# Tool keys, in the order they are run and shown.
GZIP_FLOOR = "gzip-floor"
RDF_BULKLOAD = "rdf-bulkload"
ANCHORS = ("tdb2-xloader", "tdb2-phased", "tdb2-parallel", "oxigraph")
JENA_ANCHORS = ("tdb2-xloader", "tdb2-phased", "tdb2-parallel")

# Kubernetes quantities, as the loader's --memory reads them (crates/cli/src/quantity.rs):
# plain bytes, k M G T P E (powers of 1000; also kB MB GB TB), Ki Mi Gi Ti Pi Ei (powers of
# 1024; also KiB MiB GiB TiB), an optional decimal fraction.
_SIZE_RE = re.compile(r"^(\d+(?:\.\d+)?)(|k|kB|M|MB|G|GB|T|TB|P|E|Ki|KiB|Mi|MiB|Gi|GiB|Ti|TiB|Pi|Ei)$")
_SIZE_MULT = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
              "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40, "Pi": 1 << 50, "Ei": 1 << 60}


def parse_size(text):
    """'4Gi', '1536Mi', '800M', '1000' -> bytes (Kubernetes quantities, as --memory means)."""
    m = _SIZE_RE.match(str(text))
    if not m:
        raise ValueError("not a size: %r (use e.g. 2Gi, 1536Mi, 800M)" % (text,))
    number, suffix = m.group(1), m.group(2)
    whole, _, fraction = number.partition(".")
    scale = 10 ** len(fraction)
    mult = _SIZE_MULT[suffix[:-1] if suffix.endswith("B") else suffix]
    return -(-int(whole + fraction) * mult // scale)  # a fraction of a byte rounds up


def parse_count(text):
    """A triple count as the Makefile and the generator take it: 1000000, 1e6, 10^6, 1_000."""
    t = text.replace("_", "")
    m = re.fullmatch(r"(\d+)(?:[eE](\d+)|\^(\d+))?", t)
    if not m:
        raise ValueError("not a count: %r (1000000, 1e6, 10^6)" % text)
    n = int(m.group(1))
    if m.group(2):
        n *= 10 ** int(m.group(2))
    elif m.group(3):
        n **= int(m.group(3))
    if n <= 0:
        raise ValueError("not a count: %r" % text)
    return n


def short_count(n):
    """1000000 -> '1e6', 25000000 -> '2.5e7', 123456 -> '123456' (dataset names)."""
    k = len(str(n)) - 1
    if k >= 3:
        m = n / 10 ** k
        if m == int(m):
            return "%de%d" % (int(m), k)
        if n % 10 ** (k - 1) == 0:
            return "%se%d" % (("%.1f" % m), k)
    return str(n)


def fmt_bytes(n):
    if n is None:
        return "—"
    for unit, mult in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= mult:
            return "%.2f %s" % (n / mult, unit) if n < 10 * mult else "%.1f %s" % (n / mult, unit)
    return "%d B" % n


def fmt_seconds(s):
    if s is None:
        return "—"
    return "%.2f" % s if s < 100 else "%.0f" % s


def fmt_rate(r):
    if r is None:
        return "—"
    if r >= 1e6:
        return "%.2fM" % (r / 1e6)
    if r >= 1e3:
        return "%.1fK" % (r / 1e3)
    return "%.0f" % r


def fmt_ratio(r):
    return "—" if r is None else "%.2f×" % r


def ratio(numerator, denominator):
    """numerator/denominator, or None when either is missing or the denominator is 0."""
    if numerator is None or denominator is None or denominator <= 0:
        return None
    return numerator / denominator


def median_or_none(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def summarise_runs(runs):
    """Collapse the repeats of one tool into one row: the median of each figure over the
    successful runs (peaks too: a median of peaks, not the maximum; all runs stay in the
    JSON)."""
    ok = [r for r in runs if r.get("ok")]
    row = {"runs": len(runs), "ok_runs": len(ok), "ok": bool(ok) and len(ok) == len(runs)}
    keys = ("wall_s", "cpu_s", "sync_s", "peak_rss", "peak_rss_anon", "tmp_peak",
            "disk_peak", "db_size", "node_data_size", "loadavg_before")
    for k in keys:
        row[k] = median_or_none([r.get(k) for r in ok])
    if len(ok) > 1:
        walls = [r["wall_s"] for r in ok]
        row["wall_min_s"], row["wall_max_s"] = min(walls), max(walls)
    errors = [r.get("error") for r in runs if not r.get("ok") and r.get("error")]
    if errors:
        row["error"] = errors[0]
    return row


def compute_ratios(rows, triples):
    """Adds triples_per_s, x_floor (wall / gzip floor) and, on every anchor row,
    rdf_speedup = anchor wall / rdf-bulkload wall (how many times faster rdf-bulkload is).
    rows: {tool: summary row}. Returns the per-anchor speedups of rdf-bulkload."""
    floor = rows.get(GZIP_FLOOR, {}).get("wall_s") if rows.get(GZIP_FLOOR, {}).get("ok") else None
    ours = rows.get(RDF_BULKLOAD, {})
    ours_wall = ours.get("wall_s") if ours.get("ok") else None
    speedups = {}
    for tool, row in rows.items():
        wall = row.get("wall_s") if row.get("ok") else None
        row["triples_per_s"] = ratio(triples, wall) if tool != GZIP_FLOOR else None
        row["x_floor"] = ratio(wall, floor) if tool != GZIP_FLOOR else (1.0 if floor else None)
        if tool in ANCHORS:
            row["rdf_speedup"] = ratio(wall, ours_wall)
            speedups[tool] = row["rdf_speedup"]
    return speedups


def check_targets(rows, memory_budget=None):
    """The targets of issue 3 that one dataset's run can decide. Returns a list of
    (name, value, target, passed) with passed None when it cannot be decided."""
    out = []
    ours = rows.get(RDF_BULKLOAD)
    if not ours or not ours.get("ok"):
        return out
    jena = [rows[t] for t in JENA_ANCHORS if t in rows and rows[t].get("ok")]
    if jena:
        fastest = min(jena, key=lambda r: r["wall_s"])
        v = ratio(fastest["wall_s"], ours["wall_s"])
        out.append(("speedup vs fastest Jena loader", v, ">= 3×", v is not None and v >= 3.0))
    ox = rows.get("oxigraph")
    if ox and ox.get("ok"):
        v = ratio(ox["wall_s"], ours["wall_s"])
        out.append(("speedup vs Oxigraph", v, ">= 2×", v is not None and v >= 2.0))
    if ours.get("x_floor") is not None:
        v = ours["x_floor"]
        out.append(("wall / gzip -dc floor", v, "<= 2.5×", v <= 2.5))
    xl = rows.get("tdb2-xloader")
    if xl and xl.get("ok") and xl.get("db_size") and ours.get("db_size"):
        v = ratio(ours["db_size"], xl["db_size"])
        out.append(("DB size / xloader DB size", v, "<= 1", v <= 1.0))
    if memory_budget and ours.get("peak_rss"):
        v = ratio(ours["peak_rss"], memory_budget)
        out.append(("peak RSS / --memory budget", v, "<= 1.1", v <= 1.1))
    return out


TABLE_COLUMNS = (
    ("tool", "tool"),
    ("status", "status"),
    ("wall s", "wall"),
    ("triples/s", "rate"),
    ("× gzip floor", "x_floor"),
    ("rdf-bulkload speed-up", "speedup"),
    ("CPU s", "cpu"),
    ("peak RSS (tree)", "rss"),
    ("peak anon RSS", "rss_anon"),
    ("temp disk peak", "tmp"),
    ("work disk peak", "disk"),
    ("DB size", "db"),
)


def _cell(tool, row, key):
    if key == "tool":
        return tool
    if key == "status":
        if row.get("skipped"):
            return "skipped"
        if not row.get("ok"):
            return "FAILED" if not row.get("ok_runs") else "%d/%d ok" % (row["ok_runs"], row["runs"])
        return "ok"
    if not row.get("ok"):
        return "—"
    return {
        "wall": lambda: fmt_seconds(row.get("wall_s")),
        "rate": lambda: fmt_rate(row.get("triples_per_s")),
        "x_floor": lambda: fmt_ratio(row.get("x_floor")),
        "speedup": lambda: fmt_ratio(row.get("rdf_speedup")) if tool in ANCHORS else "",
        "cpu": lambda: fmt_seconds(row.get("cpu_s")),
        "rss": lambda: fmt_bytes(row.get("peak_rss")),
        "rss_anon": lambda: fmt_bytes(row.get("peak_rss_anon")),
        "tmp": lambda: fmt_bytes(row.get("tmp_peak")) if tool != GZIP_FLOOR else "",
        "disk": lambda: fmt_bytes(row.get("disk_peak")) if tool != GZIP_FLOOR else "",
        "db": lambda: fmt_bytes(row.get("db_size")) if tool != GZIP_FLOOR else "",
    }[key]()


def render_table(rows, order=None):
    """Markdown table, one line per tool, in `order` (default: insertion order)."""
    order = order or list(rows)
    lines = ["| " + " | ".join(h for h, _ in TABLE_COLUMNS) + " |",
             "|" + "|".join("---" if k in ("tool", "status") else "---:" for _, k in TABLE_COLUMNS) + "|"]
    for tool in order:
        if tool in rows:
            lines.append("| " + " | ".join(_cell(tool, rows[tool], k) for _, k in TABLE_COLUMNS) + " |")
    return "\n".join(lines) + "\n"


def render_targets(targets):
    if not targets:
        return ""
    lines = ["| target (issue 3) | measured | wanted | met |", "|---|---:|---|---|"]
    for name, value, want, passed in targets:
        shown = "—" if value is None else "{:,}".format(value) if isinstance(value, int) else "%.2f" % value
        lines.append("| %s | %s | %s | %s |" % (name, shown, want,
                                             "—" if passed is None else ("yes" if passed else "**no**")))
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- process tree polling

def _read_stat(pid):
    """(ppid, session id) of a live pid, or None."""
    try:
        with open("/proc/%d/stat" % pid, "rb") as f:
            data = f.read()
    except OSError:
        return None
    # The command name is in parentheses and may hold spaces: split after the last ')'.
    fields = data[data.rfind(b")") + 2:].split()
    return int(fields[1]), int(fields[3])


def process_tree(root_pid):
    """Pids of root_pid, its descendants, and anything else in its session (so that a
    child that was re-parented to init after its parent exited is still counted)."""
    parent, session = {}, {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = _read_stat(int(name))
            if st:
                parent[int(name)], session[int(name)] = st
    if root_pid not in parent:
        return []
    root_sid = session[root_pid]
    children = {}
    for pid, ppid in parent.items():
        children.setdefault(ppid, []).append(pid)
    tree, stack = set(), [root_pid]
    while stack:
        pid = stack.pop()
        if pid not in tree:
            tree.add(pid)
            stack.extend(children.get(pid, ()))
    if root_sid == root_pid:  # the tool leads its own session (start_new_session=True)
        tree.update(pid for pid, sid in session.items() if sid == root_sid)
    return sorted(tree)


class TreeTracker:
    """Incremental process_tree(): remembers which pids it has classified, so a sample
    reads /proc/PID/stat only for pids born since the last one. A process outside the
    tree never joins it later (re-parenting goes to init or a subreaper, and setsid only
    leaves a session), and pids are not reused within a sampling interval in practice."""

    def __init__(self, root_pid):
        self.root_pid = root_pid
        self.members = set()
        self.others = set()
        self.root_sid = None

    def pids(self):
        live = {int(n) for n in os.listdir("/proc") if n.isdigit()}
        self.members &= live
        self.others &= live
        if self.root_sid is None:
            st = _read_stat(self.root_pid)
            if st is None:
                return []
            self.members.add(self.root_pid)
            self.root_sid = st[1]
        new = {}
        for pid in live - self.members - self.others:
            st = _read_stat(pid)
            if st:
                new[pid] = st
        changed = True
        while changed:  # a new child's parent may itself be new
            changed = False
            for pid, (ppid, sid) in list(new.items()):
                if ppid in self.members or (sid == self.root_sid == self.root_pid):
                    self.members.add(pid)
                    del new[pid]
                    changed = True
        self.others.update(new)
        return sorted(self.members)


def rss_of(pid):
    """(VmRSS, RssAnon) of a pid in bytes from /proc/PID/status, (0, 0) if gone."""
    rss = anon = 0
    try:
        with open("/proc/%d/status" % pid, "rb") as f:
            for line in f:
                if line.startswith(b"VmRSS:"):
                    rss = int(line.split()[1]) * 1024
                elif line.startswith(b"RssAnon:"):
                    anon = int(line.split()[1]) * 1024
    except OSError:
        pass
    return rss, anon


def tree_rss(root_pid, tracker=None):
    """(summed VmRSS, summed RssAnon, number of processes) over the tree right now."""
    total = anon = 0
    pids = tracker.pids() if tracker else process_tree(root_pid)
    for pid in pids:
        r, a = rss_of(pid)
        total += r
        anon += a
    return total, anon, len(pids)


def dir_usage(path):
    """Allocated bytes (st_blocks, like du) under path; files vanishing meanwhile are
    ignored. 0 when path does not exist."""
    total = 0
    stack = [path]
    while stack:
        p = stack.pop()
        try:
            with os.scandir(p) as it:
                for e in it:
                    try:
                        if e.is_dir(follow_symlinks=False):
                            stack.append(e.path)
                        else:
                            total += e.stat(follow_symlinks=False).st_blocks * 512
                    except OSError:
                        pass
        except OSError:
            pass
    return total


class TreePoller:
    """Background thread sampling a process tree's summed RSS every `interval` seconds
    and the size of some directories every `disk_interval` seconds, keeping the peaks."""

    def __init__(self, root_pid, interval=0.1, dirs=None, disk_interval=0.5):
        self.root_pid = root_pid
        self.interval = interval
        self.dirs = dict(dirs or {})
        self.disk_interval = disk_interval
        self.peak_rss = 0
        self.peak_rss_anon = 0
        self.peak_procs = 0
        self.samples = 0
        self.dir_peaks = {k: 0 for k in self.dirs}
        self.sum_peak = 0  # peak of the sum of all dirs, sampled together
        self._tracker = TreeTracker(root_pid)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="tree-poller", daemon=True)

    def start(self):
        self._thread.start()
        return self

    def sample_disk(self):
        sizes = {k: dir_usage(p) for k, p in self.dirs.items()}
        for k, v in sizes.items():
            self.dir_peaks[k] = max(self.dir_peaks[k], v)
        self.sum_peak = max(self.sum_peak, sum(sizes.values()))

    def _run(self):
        next_disk = 0.0
        while not self._stop.is_set():
            rss, anon, n = tree_rss(self.root_pid, self._tracker)
            self.peak_rss = max(self.peak_rss, rss)
            self.peak_rss_anon = max(self.peak_rss_anon, anon)
            self.peak_procs = max(self.peak_procs, n)
            self.samples += 1
            now = time.monotonic()
            if self.dirs and now >= next_disk:
                self.sample_disk()
                next_disk = now + self.disk_interval
            self._stop.wait(self.interval)

    def stop(self):
        """Stops sampling (after the root pid has been reaped; pids are not reused
        within a sampling interval in practice) and takes a last disk sample."""
        self._stop.set()
        self._thread.join()
        if self.dirs:
            self.sample_disk()

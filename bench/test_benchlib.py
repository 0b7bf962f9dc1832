"""Checks of the benchmark harness's own parts (no loaders needed, ~3 s):
    python3 -m pytest -q bench/test_benchlib.py     or     python3 -m unittest bench/test_benchlib.py
"""
import os
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402

MiB = 1 << 20


def row(wall, **kw):
    r = {"ok": True, "ok_runs": 1, "runs": 1, "wall_s": wall}
    r.update(kw)
    return r


class CountTest(unittest.TestCase):
    def test_counts_as_the_makefile_writes_them(self):
        for text, n in (("1000000", 10 ** 6), ("1e6", 10 ** 6), ("10^8", 10 ** 8), ("2_500", 2500), ("25e5", 2500000)):
            self.assertEqual(bl.parse_count(text), n)
        for bad in ("0", "x", "1e", "-5", "1.5e6"):
            with self.assertRaises(ValueError):
                bl.parse_count(bad)

    def test_short_names(self):
        self.assertEqual([bl.short_count(n) for n in (10 ** 6, 10 ** 8, 25 * 10 ** 6, 123456, 999)],
                         ["1e6", "1e8", "2.5e7", "123456", "999"])


class RatioTest(unittest.TestCase):
    def test_ratios_against_every_anchor_and_the_floor(self):
        rows = {
            bl.GZIP_FLOOR: row(10.0),
            bl.RDF_BULKLOAD: row(20.0),
            "tdb2-xloader": row(250.0),
            "tdb2-phased": row(70.0),
            "tdb2-parallel": row(60.0),
            "oxigraph": row(40.0),
        }
        speedups = bl.compute_ratios(rows, triples=10_000_000)
        self.assertEqual(speedups, {"tdb2-xloader": 12.5, "tdb2-phased": 3.5,
                                    "tdb2-parallel": 3.0, "oxigraph": 2.0})
        self.assertEqual(rows[bl.RDF_BULKLOAD]["triples_per_s"], 500_000)
        self.assertEqual(rows[bl.RDF_BULKLOAD]["x_floor"], 2.0)
        self.assertEqual(rows["oxigraph"]["x_floor"], 4.0)
        self.assertIsNone(rows[bl.GZIP_FLOOR]["triples_per_s"])
        self.assertNotIn("rdf_speedup", rows[bl.RDF_BULKLOAD])

    def test_missing_or_failed_runs_give_no_ratio(self):
        rows = {bl.RDF_BULKLOAD: {"ok": False, "runs": 1, "ok_runs": 0},
                "oxigraph": row(40.0), "tdb2-phased": {"skipped": True, "ok": False}}
        speedups = bl.compute_ratios(rows, triples=100)
        self.assertIsNone(speedups["oxigraph"])
        self.assertIsNone(rows["oxigraph"]["x_floor"])  # no floor measured
        self.assertEqual(rows["oxigraph"]["triples_per_s"], 2.5)
        self.assertIsNone(bl.ratio(1, 0))

    def test_targets(self):
        rows = {bl.GZIP_FLOOR: row(10.0), bl.RDF_BULKLOAD: row(20.0, db_size=90, peak_rss=1200),
                "tdb2-xloader": row(250.0, db_size=100), "tdb2-phased": row(50.0),
                "oxigraph": row(45.0)}
        bl.compute_ratios(rows, triples=1)
        got = {name: (round(v, 3), met) for name, v, _want, met in bl.check_targets(rows, memory_budget=1000)}
        self.assertEqual(got["speedup vs fastest Jena loader"], (2.5, False))  # phased is fastest
        self.assertEqual(got["speedup vs Oxigraph"], (2.25, True))
        self.assertEqual(got["wall / gzip -dc floor"], (2.0, True))
        self.assertEqual(got["DB size / xloader DB size"], (0.9, True))
        self.assertEqual(got["peak RSS / --memory budget"], (1.2, False))

    def test_summary_is_the_median_of_successful_runs(self):
        runs = [{"ok": True, "wall_s": 3.0, "peak_rss": 10}, {"ok": True, "wall_s": 1.0, "peak_rss": 30},
                {"ok": True, "wall_s": 2.0, "peak_rss": 20}]
        s = bl.summarise_runs(runs)
        self.assertEqual((s["wall_s"], s["peak_rss"], s["wall_min_s"], s["wall_max_s"]), (2.0, 20, 1.0, 3.0))
        self.assertTrue(s["ok"])
        s = bl.summarise_runs(runs[:1] + [{"ok": False, "error": "exit code 3"}])
        self.assertFalse(s["ok"])
        self.assertEqual((s["ok_runs"], s["error"]), (1, "exit code 3"))

    def test_sizes(self):
        self.assertEqual(bl.parse_size("4Gi"), 4 << 30)
        self.assertEqual(bl.parse_size("4G"), 4 * 10**9)
        self.assertEqual(bl.parse_size("1536Mi"), 1536 * MiB)
        self.assertEqual(bl.parse_size("800MB"), 800 * 10**6)
        self.assertEqual(bl.parse_size("2GiB"), 2 << 30)
        self.assertEqual(bl.parse_size("1.5Gi"), 3 << 29)
        self.assertEqual(bl.parse_size("1000"), 1000)
        for bad in ("64m", "64K", "1.G", "2 G"):
            with self.assertRaises(ValueError):
                bl.parse_size(bad)
        with self.assertRaises(ValueError):
            bl.parse_size("lots")
        self.assertEqual(bl.fmt_bytes(3 * MiB // 2), "1.50 MiB")
        self.assertEqual(bl.fmt_bytes(20 << 30), "20.0 GiB")


class TableTest(unittest.TestCase):
    def test_table_has_one_line_per_tool_with_formatted_figures(self):
        rows = {bl.GZIP_FLOOR: row(10.0, peak_rss=2 * MiB), bl.RDF_BULKLOAD: row(20.0, peak_rss=3 << 30,
                                                                                 db_size=512 * MiB),
                "oxigraph": row(40.0), "tdb2-xloader": {"ok": False, "runs": 1, "ok_runs": 0},
                "tdb2-phased": {"skipped": True, "ok": False, "reason": "asked"}}
        bl.compute_ratios(rows, triples=10_000_000)
        table = bl.render_table(rows, [bl.GZIP_FLOOR, bl.RDF_BULKLOAD, "tdb2-xloader", "tdb2-phased", "oxigraph"])
        lines = table.strip().splitlines()
        self.assertEqual(len(lines), 2 + 5)
        ncols = len(bl.TABLE_COLUMNS)
        for line in lines:
            self.assertEqual(line.count("|"), ncols + 1, line)
        cells = {l.split("|")[1].strip(): [c.strip() for c in l.split("|")[1:-1]] for l in lines[2:]}
        head = [c.strip() for c in lines[0].split("|")[1:-1]]
        col = {h: i for i, h in enumerate(head)}
        ours = cells[bl.RDF_BULKLOAD]
        self.assertEqual(ours[col["wall s"]], "20.00")
        self.assertEqual(ours[col["triples/s"]], "500.0K")
        self.assertEqual(ours[col["× gzip floor"]], "2.00×")
        self.assertEqual(ours[col["peak RSS (tree)"]], "3.00 GiB")
        self.assertEqual(ours[col["DB size"]], "512.0 MiB")
        self.assertEqual(cells["oxigraph"][col["rdf-bulkload speed-up"]], "2.00×")
        self.assertEqual(cells["tdb2-xloader"][col["status"]], "FAILED")
        self.assertEqual(cells["tdb2-phased"][col["status"]], "skipped")
        targets = bl.render_targets([("speedup vs Oxigraph", 2.0, ">= 2×", True), ("x", None, "y", None)])
        self.assertIn("| speedup vs Oxigraph | 2.00 | >= 2× | yes |", targets)


class PollerTest(unittest.TestCase):
    def test_rss_is_summed_over_the_whole_tree_including_reparented_children(self):
        # A parent holding ~40 MiB that starts a child holding ~60 MiB, and a grandchild
        # holding ~60 MiB whose own parent exits at once (so it is re-parented to init and
        # only found through the session).
        script = textwrap.dedent("""
            import os, subprocess, sys, time
            hold = lambda n: bytearray(os.urandom(1)) * (n << 20)
            code = "import os,time; b=bytearray(b'x')*(%d<<20); time.sleep(3)"
            if os.fork() == 0:                      # orphaned grandchild
                if os.fork() == 0:
                    b = hold(60); time.sleep(3); os._exit(0)
                os._exit(0)
            a = hold(40)
            child = subprocess.Popen([sys.executable, "-c", code % 60])
            child.wait()
        """)
        proc = subprocess.Popen([sys.executable, "-c", script], start_new_session=True)
        poller = bl.TreePoller(proc.pid, interval=0.05).start()
        try:
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and poller.peak_procs < 3:
                time.sleep(0.05)
            time.sleep(1.0)  # let all three fill their buffers
            tree = bl.process_tree(proc.pid)
        finally:
            proc.wait()
            poller.stop()
        self.assertGreaterEqual(len(tree), 3, tree)
        self.assertGreater(poller.peak_rss, 150 * MiB)  # 40 + 60 + 60 MiB, plus interpreters
        self.assertGreater(poller.peak_rss_anon, 150 * MiB)
        self.assertLess(poller.peak_rss, 400 * MiB)
        self.assertGreater(poller.samples, 5)

    def test_incremental_tracker_agrees_with_a_full_scan(self):
        proc = subprocess.Popen(["bash", "-c", "sleep 0.3; (sleep 2 & sleep 2 & wait) & wait"],
                                start_new_session=True)
        try:
            tracker = bl.TreeTracker(proc.pid)
            first = tracker.pids()  # bash and its `sleep 0.3`, before the rest exist
            self.assertIn(proc.pid, first)
            self.assertLess(len(first), 4)
            deadline = time.monotonic() + 10
            while len(bl.process_tree(proc.pid)) < 4 and time.monotonic() < deadline:
                time.sleep(0.05)
            full = bl.process_tree(proc.pid)
            self.assertEqual(len(full), 4, full)  # bash, subshell, two sleeps
            self.assertEqual(tracker.pids(), full)
        finally:
            os.killpg(proc.pid, 9)
            proc.wait()

    def test_dead_process_has_no_tree(self):
        proc = subprocess.Popen([sys.executable, "-c", "pass"])
        proc.wait()
        self.assertEqual(bl.process_tree(proc.pid), [])
        self.assertEqual(bl.tree_rss(proc.pid), (0, 0, 0))

    def test_disk_usage_peak_is_kept_after_files_are_removed(self):
        with tempfile.TemporaryDirectory() as d:
            work = os.path.join(d, "tmp")
            script = ("import os,time; os.makedirs(%r); p=os.path.join(%r,'f');"
                      "open(p,'wb').write(os.urandom(3<<20)); time.sleep(0.6); os.remove(p)") % (work, work)
            proc = subprocess.Popen([sys.executable, "-c", script])
            poller = bl.TreePoller(proc.pid, interval=0.05, dirs={"tmp": work}, disk_interval=0.1).start()
            proc.wait()
            poller.stop()
            self.assertGreaterEqual(poller.dir_peaks["tmp"], 3 * MiB)
            self.assertEqual(bl.dir_usage(work), 0)
            self.assertEqual(bl.dir_usage(os.path.join(d, "absent")), 0)


if __name__ == "__main__":
    unittest.main()

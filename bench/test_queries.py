"""Checks of bench/queries.py's own logic (no Jena needed, well under a second):
    python3 -m pytest -q bench/test_queries.py
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import queries as bq  # noqa: E402

# The shape of a Fuseki 5.6.0 log with `--set arq:logExec=all` (abridged: the lines between
# the request and its Execute lines are plans and the query text, which must be skipped).
FUSEKI_LOG = """\
[2026-11-25 07:07:10] Server     INFO  Started 2026/11/25 07:07:10 UTC on port 3999
[2026-11-25 07:07:10] Fuseki     INFO  [1] GET http://127.0.0.1:3999/$/ping
[2026-11-25 07:07:11] Fuseki     INFO  [2] POST http://127.0.0.1:3999/ds/query
[2026-11-25 07:07:11] exec       INFO  TDB2
  (filter (> ?p1 238)
    (quadpattern
      (quad <urn:x-arq:DefaultGraphNode> ?product <http://e/label> ?label)))
[2026-11-25 07:07:11] exec       INFO  Execute
  ?product <http://e/feature> <http://e/F1>
  ?product rdfs:label ?label
[2026-11-25 07:07:12] exec       INFO  Execute ::   <http://e/P1> <http://e/rating1> ?rating1
[2026-11-25 07:07:12] Fuseki     INFO  [2] 200 OK (437 ms)
[2026-11-25 07:07:12] Fuseki     INFO  [3] POST http://127.0.0.1:3999/ds/query
[2026-11-25 07:07:12] Fuseki     INFO  [3] 200 OK (2 ms)
[2026-11-25 07:07:13] Fuseki     INFO  [4] POST http://127.0.0.1:3999/ds/query
[2026-11-25 07:07:13] exec       INFO  Execute
  ?offer <http://e/product> <http://e/P1>
  ?offer <http://e/price> ?price"""


class JoinOrderTest(unittest.TestCase):
    def test_one_list_per_query_request_in_order(self):
        self.assertEqual(bq.join_orders(FUSEKI_LOG), [
            ["?product <http://e/feature> <http://e/F1> ; ?product rdfs:label ?label",
             "<http://e/P1> <http://e/rating1> ?rating1"],
            [],  # a query without a basic graph pattern of two or more triples
            ["?offer <http://e/product> <http://e/P1> ; ?offer <http://e/price> ?price"],
        ])

    def test_same_orders_compares_every_parameter_set(self):
        plans = {"a": {("Q1", 0): ["x ; y"], ("Q1", 1): ["x ; y"], ("Q2", 0): ["p"]},
                 "b": {("Q1", 0): ["x ; y"], ("Q1", 1): ["y ; x"], ("Q2", 0): ["p"]}}
        self.assertFalse(bq.same_orders(plans, "Q1", "a", "b"))
        self.assertTrue(bq.same_orders(plans, "Q2", "a", "b"))


def samples_for(times_ms):
    """{(round, query, i, db): [seconds]} from {db: [[ms per run] per round]} for one query and set."""
    out = {}
    for db, per_round in times_ms.items():
        for r, runs in enumerate(per_round):
            out[(r, "Q1", 0, db)] = [t / 1000.0 for t in runs]
    return out


class SummaryTest(unittest.TestCase):
    def test_medians_ratios_and_round_ranges(self):
        # Per round the medians are 11, 12 / 21, 24 / 11, 13; over all rounds 12 / 22.5 / 11.5.
        s = samples_for({bq.OURS: [[10, 11, 50], [12, 12, 12]],
                         bq.XLOADER: [[20, 22, 21], [24, 23, 25]],
                         bq.NOSTATS: [[11, 11, 11], [13, 12, 90]]})
        got = bq.summarise(s, names=["Q1"])
        self.assertAlmostEqual(got["ms"]["Q1"][bq.OURS], 12.0)
        self.assertAlmostEqual(got["ratios"]["Q1"]["ours / xloader"], 12 / 22.5)
        self.assertEqual([round(x, 4) for x in got["round_ratios"]["Q1"]["ours / xloader"]],
                         [round(11 / 21, 4), 0.5])
        self.assertAlmostEqual(got["ratios"]["Q1"]["without / with stats.opt"], 11.5 / 12)
        self.assertAlmostEqual(got["geomean"]["ours / xloader"], 12 / 22.5)

    def test_mean_over_parameter_sets(self):
        s = {(0, "Q1", 0, db): [0.010] for db in bq.ORDER}
        s.update({(0, "Q1", 1, db): [0.030] for db in bq.ORDER})
        self.assertAlmostEqual(bq.summarise(s, names=["Q1"])["ms"]["Q1"][bq.OURS], 20.0)


class VerdictTest(unittest.TestCase):
    def test_stats_verdicts(self):
        self.assertEqual(bq.stats_verdict(0.5, [0.4, 0.6], True, 0.1), "same join orders")
        self.assertEqual(bq.stats_verdict(0.8, [0.7, 0.85], False, 0.1), "HURTS")
        self.assertEqual(bq.stats_verdict(0.8, [0.7, 1.1], False, 0.1), "within noise")  # not every round
        self.assertEqual(bq.stats_verdict(0.8, [0.7, 0.95], False, 0.1), "within noise")  # one round within
        self.assertEqual(bq.stats_verdict(0.95, [0.9, 0.99], False, 0.1), "within noise")  # within tolerance
        self.assertEqual(bq.stats_verdict(1.5, [1.2, 1.9], False, 0.1), "helps")
        self.assertEqual(bq.stats_verdict(1.5, [1.05, 1.9], False, 0.1), "within noise")

    def test_speed_verdicts(self):
        self.assertEqual(bq.speed_verdict(1.3, [1.2, 1.4], 0.1), "SLOWER")
        self.assertEqual(bq.speed_verdict(1.3, [0.9, 1.7], 0.1), "within noise")
        self.assertEqual(bq.speed_verdict(1.14, [1.03, 1.44], 0.1), "within noise")
        self.assertEqual(bq.speed_verdict(0.7, [0.6, 0.8], 0.1), "faster")

    def test_report_flags_only_what_differs_beyond_noise(self):
        s = samples_for({bq.OURS: [[30], [30]], bq.XLOADER: [[20], [20]], bq.NOSTATS: [[20], [21]]})
        plans = {db: {("Q1", 0): ["a ; b"]} for db in bq.ORDER}
        plans[bq.NOSTATS] = {("Q1", 0): ["b ; a"]}
        lines, flags = bq.render_route(bq.summarise(s, names=["Q1"]), plans, 0.1)
        self.assertEqual(flags, {"SLOWER": ["Q1"], "HURTS": ["Q1"]})
        self.assertIn("differ: with/without stats", lines[2])
        plans[bq.NOSTATS] = plans[bq.OURS]
        _, flags = bq.render_route(bq.summarise(s, names=["Q1"]), plans, 0.1)
        self.assertEqual(flags, {"SLOWER": ["Q1"], "HURTS": []})

    def test_rotation_puts_every_database_first_in_turn(self):
        self.assertEqual([bq.rotate(bq.ORDER, n)[0] for n in range(3)], bq.ORDER)


if __name__ == "__main__":
    unittest.main()

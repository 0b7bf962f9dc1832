#!/usr/bin/env python3
"""Query speed: the BSBM explore use case on rdf-bulkload's database, on Jena's `tdb2.xloader`
database of the same data, and on ours with `stats.opt` removed (`make bench-queries`).

The eleven queries of the BSBM 3.1 explore use case (Q1-Q5, Q7-Q12; Q6 was dropped from the
use case in 3.0) are written here from the specification's text. Their parameters are drawn
from the data with a fixed seed, so two runs ask the same questions.

Each route (Fuseki over HTTP, `tdb2.tdbquery`) is timed in rounds. A round starts fresh JVMs
(one JVM's JIT can be luckier than another's, which no number of queries inside it averages
out), reads every database file once so that all three start from the page cache, and
interleaves the databases query by query, so that a burst of load from elsewhere hits all
three. The report gives, per query, the mean over parameter sets of the median time, the ratios
ours/xloader and without-stats/with, their range over rounds, and the geometric means.

Before timing, one Fuseki per database logs the join order that TDB2 chose for every basic
graph pattern it ran (`arq:logExec=all`); the report says per query whether the orders are the
same on the three databases. Where they are the same, statistics cannot have made a
difference, and the ratio is the measurement's noise. The answers of the databases are compared
(the same rows for SELECT, the same number of triples for CONSTRUCT/DESCRIBE): a query that
answers differently is an error, not a timing.
"""

import argparse
import datetime as dt
import json
import os
import random
import re
import shutil
import socket
import statistics
import subprocess
import sys
import time
import urllib.parse
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.environ.get("RDF_BULKLOAD_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "rdf-bulkload")
SHARED = os.path.join(os.path.dirname(REPO), "shared")
JENA_VERSION = "5.6.0"

PREFIXES = """PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
PREFIX dc: <http://purl.org/dc/elements/1.1/>
PREFIX rev: <http://purl.org/stuff/rev#>
PREFIX foaf: <http://xmlns.com/foaf/0.1/>
PREFIX bsbm: <http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/>
PREFIX bsbm-export: <http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/export/>
"""

# The explore use case. %Name% placeholders are filled from the data (see draw_parameters).
QUERIES = {
    "Q1": """SELECT DISTINCT ?product ?label WHERE {
  ?product rdfs:label ?label .
  ?product a %ProductType% .
  ?product bsbm:productFeature %ProductFeature1% .
  ?product bsbm:productFeature %ProductFeature2% .
  ?product bsbm:productPropertyNumeric1 ?value1 .
  FILTER (?value1 > %x%)
} ORDER BY ?label LIMIT 10""",
    "Q2": """SELECT ?label ?comment ?producer ?productFeature ?propertyTextual1 ?propertyTextual2
  ?propertyTextual3 ?propertyNumeric1 ?propertyNumeric2 ?propertyTextual4 ?propertyTextual5 ?propertyNumeric4
WHERE {
  %Product% rdfs:label ?label .
  %Product% rdfs:comment ?comment .
  %Product% bsbm:producer ?p .
  ?p rdfs:label ?producer .
  %Product% dc:publisher ?p .
  %Product% bsbm:productFeature ?f .
  ?f rdfs:label ?productFeature .
  %Product% bsbm:productPropertyTextual1 ?propertyTextual1 .
  %Product% bsbm:productPropertyTextual2 ?propertyTextual2 .
  %Product% bsbm:productPropertyTextual3 ?propertyTextual3 .
  %Product% bsbm:productPropertyNumeric1 ?propertyNumeric1 .
  %Product% bsbm:productPropertyNumeric2 ?propertyNumeric2 .
  OPTIONAL { %Product% bsbm:productPropertyTextual4 ?propertyTextual4 }
  OPTIONAL { %Product% bsbm:productPropertyTextual5 ?propertyTextual5 }
  OPTIONAL { %Product% bsbm:productPropertyNumeric4 ?propertyNumeric4 }
}""",
    "Q3": """SELECT ?product ?label WHERE {
  ?product rdfs:label ?label .
  ?product a %ProductType% .
  ?product bsbm:productFeature %ProductFeature1% .
  ?product bsbm:productPropertyNumeric1 ?p1 .
  FILTER (?p1 > %x%)
  ?product bsbm:productPropertyNumeric3 ?p3 .
  FILTER (?p3 < %y%)
  OPTIONAL { ?product bsbm:productFeature %ProductFeature2% . ?product rdfs:label ?testVar }
  FILTER (!bound(?testVar))
} ORDER BY ?label LIMIT 10""",
    "Q4": """SELECT DISTINCT ?product ?label ?propertyTextual WHERE {
  {
    ?product rdfs:label ?label .
    ?product rdf:type %ProductType% .
    ?product bsbm:productFeature %ProductFeature1% .
    ?product bsbm:productFeature %ProductFeature2% .
    ?product bsbm:productPropertyTextual1 ?propertyTextual .
    ?product bsbm:productPropertyNumeric1 ?p1 .
    FILTER (?p1 > %x%)
  } UNION {
    ?product rdfs:label ?label .
    ?product rdf:type %ProductType% .
    ?product bsbm:productFeature %ProductFeature1% .
    ?product bsbm:productFeature %ProductFeature3% .
    ?product bsbm:productPropertyTextual1 ?propertyTextual .
    ?product bsbm:productPropertyNumeric2 ?p2 .
    FILTER (?p2 > %y%)
  }
} ORDER BY ?label OFFSET 5 LIMIT 10""",
    "Q5": """SELECT DISTINCT ?product ?productLabel WHERE {
  ?product rdfs:label ?productLabel .
  FILTER (%Product% != ?product)
  %Product% bsbm:productFeature ?prodFeature .
  ?product bsbm:productFeature ?prodFeature .
  %Product% bsbm:productPropertyNumeric1 ?origProperty1 .
  ?product bsbm:productPropertyNumeric1 ?simProperty1 .
  FILTER (?simProperty1 < (?origProperty1 + 120) && ?simProperty1 > (?origProperty1 - 120))
  %Product% bsbm:productPropertyNumeric2 ?origProperty2 .
  ?product bsbm:productPropertyNumeric2 ?simProperty2 .
  FILTER (?simProperty2 < (?origProperty2 + 170) && ?simProperty2 > (?origProperty2 - 170))
} ORDER BY ?productLabel LIMIT 5""",
    "Q7": """SELECT ?productLabel ?offer ?price ?vendor ?vendorTitle ?review ?revTitle ?reviewer ?revName
  ?rating1 ?rating2 WHERE {
  %Product% rdfs:label ?productLabel .
  OPTIONAL {
    ?offer bsbm:product %Product% .
    ?offer bsbm:price ?price .
    ?offer bsbm:vendor ?vendor .
    ?vendor rdfs:label ?vendorTitle .
    ?vendor bsbm:country <http://downlode.org/rdf/iso-3166/countries#DE> .
    ?offer dc:publisher ?vendor .
    ?offer bsbm:validTo ?date .
    FILTER (?date > %currentDate%)
  }
  OPTIONAL {
    ?review bsbm:reviewFor %Product% .
    ?review rev:reviewer ?reviewer .
    ?reviewer foaf:name ?revName .
    ?review dc:title ?revTitle .
    OPTIONAL { ?review bsbm:rating1 ?rating1 . }
    OPTIONAL { ?review bsbm:rating2 ?rating2 . }
  }
}""",
    "Q8": """SELECT ?title ?text ?reviewDate ?reviewer ?reviewerName ?rating1 ?rating2 ?rating3 ?rating4 WHERE {
  ?review bsbm:reviewFor %Product% .
  ?review dc:title ?title .
  ?review rev:text ?text .
  FILTER langMatches(lang(?text), "EN")
  ?review bsbm:reviewDate ?reviewDate .
  ?review rev:reviewer ?reviewer .
  ?reviewer foaf:name ?reviewerName .
  OPTIONAL { ?review bsbm:rating1 ?rating1 . }
  OPTIONAL { ?review bsbm:rating2 ?rating2 . }
  OPTIONAL { ?review bsbm:rating3 ?rating3 . }
  OPTIONAL { ?review bsbm:rating4 ?rating4 . }
} ORDER BY DESC(?reviewDate) LIMIT 20""",
    "Q9": """DESCRIBE ?x WHERE { %Review% rev:reviewer ?x }""",
    "Q10": """SELECT DISTINCT ?offer ?price WHERE {
  ?offer bsbm:product %Product% .
  ?offer bsbm:vendor ?vendor .
  ?offer dc:publisher ?vendor .
  ?vendor bsbm:country <http://downlode.org/rdf/iso-3166/countries#US> .
  ?offer bsbm:deliveryDays ?deliveryDays .
  FILTER (?deliveryDays <= 3)
  ?offer bsbm:price ?price .
  ?offer bsbm:validTo ?date .
  FILTER (?date > %currentDate%)
} ORDER BY xsd:double(str(?price)) LIMIT 10""",
    "Q11": """SELECT ?property ?hasValue ?isValueOf WHERE {
  { %Offer% ?property ?hasValue }
  UNION
  { ?isValueOf ?property %Offer% }
}""",
    "Q12": """CONSTRUCT {
  %Offer% bsbm-export:product ?productURI .
  %Offer% bsbm-export:productlabel ?productlabel .
  %Offer% bsbm-export:vendor ?vendorname .
  %Offer% bsbm-export:vendorhomepage ?vendorhomepage .
  %Offer% bsbm-export:offerURL ?offerURL .
  %Offer% bsbm-export:price ?price .
  %Offer% bsbm-export:deliveryDays ?deliveryDays .
  %Offer% bsbm-export:validuntil ?validTo
} WHERE {
  %Offer% bsbm:product ?productURI .
  ?productURI rdfs:label ?productlabel .
  %Offer% bsbm:vendor ?vendorURI .
  ?vendorURI rdfs:label ?vendorname .
  ?vendorURI foaf:homepage ?vendorhomepage .
  %Offer% bsbm:offerWebpage ?offerURL .
  %Offer% bsbm:price ?price .
  %Offer% bsbm:deliveryDays ?deliveryDays .
  %Offer% bsbm:validTo ?validTo
}""",
}


def log(msg):
    print("[bench-queries %s] %s" % (time.strftime("%H:%M:%S"), msg), file=sys.stderr, flush=True)


OURS, XLOADER, NOSTATS = "rdf-bulkload", "tdb2.xloader", "rdf-bulkload without stats.opt"
ORDER = [OURS, XLOADER, NOSTATS]


class Fuseki:
    """Fuseki serving one TDB2 database on 127.0.0.1, read-only use."""

    def __init__(self, jar, db, log_path, heap, extra_args=()):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.log_path = log_path
        self.log = open(log_path, "w")
        self.proc = subprocess.Popen(
            ["java", "-Xmx" + heap, "-jar", jar, *extra_args, "--tdb2", "--loc", db, "--localhost",
             "--port", str(self.port), "/ds"],
            stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.time() + 120
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError("Fuseki exited; see %s" % log_path)
            try:
                urllib.request.urlopen("http://127.0.0.1:%d/$/ping" % self.port, timeout=2).read()
                return
            except OSError:
                if time.time() > deadline:
                    self.stop()
                    raise RuntimeError("Fuseki did not start; see %s" % log_path)
                time.sleep(0.3)

    def query(self, text, accept):
        data = urllib.parse.urlencode({"query": text}).encode()
        req = urllib.request.Request("http://127.0.0.1:%d/ds/query" % self.port, data=data,
                                     headers={"Accept": accept})
        t = time.perf_counter()
        with urllib.request.urlopen(req, timeout=600) as r:
            body = r.read()
        return time.perf_counter() - t, body

    def select(self, text):
        _, body = self.query(PREFIXES + text, "application/sparql-results+json")
        doc = json.loads(body)
        return [{k: v["value"] for k, v in b.items()} for b in doc["results"]["bindings"]]

    def stop(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, 15)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, 9)
                self.proc.wait()
        self.log.close()


def start_servers(args, dbs, logdir, tag, extra_args=()):
    servers = {}
    try:
        for db in ORDER:
            log_path = os.path.join(logdir, "fuseki-%s-%s.log" % (tag, db.replace(" ", "-")))
            servers[db] = Fuseki(args.fuseki_jar, dbs[db], log_path, args.fuseki_heap,
                                 (*union_args(args), *extra_args))
    except BaseException:
        stop_servers(servers)
        raise
    return servers


def union_args(args):
    """Query the union of the named graphs as the default graph (for a dump of quads)."""
    return ("--set", "tdb:unionDefaultGraph=true") if args.union_default_graph else ()


def stop_servers(servers):
    for s in servers.values():
        s.stop()


def read_into_page_cache(db):
    """Reads every file of the database once, so that no database starts a round with its
    files on disk while another's are cached (a fresh load, a fresh copy and a database last
    used an hour ago differ there)."""
    for root, _, files in os.walk(db):
        for name in files:
            with open(os.path.join(root, name), "rb") as f:
                while f.read(1 << 20):
                    pass


def iri(v):
    return "<%s>" % v


def draw_parameters(fuseki, seed, count):
    """`count` parameter sets per query, drawn with `seed` from what the data holds, the way
    BSBM's test driver draws them (a product and its own type and features, so that queries
    have answers)."""
    rng = random.Random(seed)
    products = [r["p"] for r in fuseki.select(
        "SELECT ?p WHERE { ?p bsbm:productPropertyNumeric1 ?n ; bsbm:productPropertyNumeric3 ?m } ORDER BY ?p")]
    offers = [r["o"] for r in fuseki.select("SELECT ?o WHERE { ?o bsbm:validFrom ?d } ORDER BY ?o")]
    reviews = [r["r"] for r in fuseki.select("SELECT ?r WHERE { ?r rev:reviewer ?x } ORDER BY ?r")]
    if not products or not offers or not reviews:
        raise RuntimeError("the data has no BSBM products, offers or reviews")
    sets = []
    for _ in range(count):
        p = rng.choice(products)
        facts = fuseki.select("""SELECT ?type ?n1 ?n2 ?n3 WHERE {
  <%s> a ?type ; bsbm:productPropertyNumeric1 ?n1 ; bsbm:productPropertyNumeric3 ?n3 .
  OPTIONAL { <%s> bsbm:productPropertyNumeric2 ?n2 }
  FILTER (?type != bsbm:Product) } ORDER BY ?type""" % (p, p))
        features = sorted({r["f"] for r in fuseki.select("SELECT ?f WHERE { <%s> bsbm:productFeature ?f }" % p)})
        while len(features) < 3:
            features.append(features[-1])
        f = rng.sample(features, 3)
        fact = rng.choice(facts)
        offer = rng.choice(offers)
        date = fuseki.select("SELECT ?d WHERE { <%s> bsbm:validFrom ?d }" % offer)[0]["d"]
        sets.append({
            "%Product%": iri(p), "%ProductType%": iri(fact["type"]),
            "%ProductFeature1%": iri(f[0]), "%ProductFeature2%": iri(f[1]), "%ProductFeature3%": iri(f[2]),
            "%x%": str(max(0, int(fact["n1"]) - rng.randint(1, 500))),
            "%y%": str(int(fact["n3"]) + rng.randint(1, 500)),
            "%Offer%": iri(offer), "%Review%": iri(rng.choice(reviews)),
            "%currentDate%": '"%s"^^xsd:dateTime' % date,
        })
    return sets


def instantiate(template, params):
    text = template
    for k, v in params.items():
        text = text.replace(k, v)
    return PREFIXES + text


def answer_key(name, body):
    """What must be equal between the databases: the sorted rows for SELECT (order matters
    only where the query orders, and ties may come in any order), the size of a graph."""
    if QUERIES[name].lstrip().startswith(("CONSTRUCT", "DESCRIBE")):
        return ("triples", len([line for line in body.decode().splitlines() if line.strip()]))
    doc = json.loads(body)
    rows = [tuple(sorted((k, v["value"]) for k, v in b.items())) for b in doc["results"]["bindings"]]
    return ("rows", sorted(rows))


def accept_for(name):
    if QUERIES[name].lstrip().startswith(("CONSTRUCT", "DESCRIBE")):
        return "application/n-triples"
    return "application/sparql-results+json"


def rotate(items, n):
    n %= len(items)
    return items[n:] + items[:n]


EXECUTE = re.compile(r"\bexec\s+INFO\s+Execute(.*)$")
REQUEST = re.compile(r"\bFuseki\s+INFO\s+\[(\d+)\] POST \S*/query\b")


def join_orders(log_text):
    """The join orders in a Fuseki log written with `arq:logExec=all`, one list per query
    request in the order the requests came: TDB2 logs each basic graph pattern it runs as
    `Execute` and its triple patterns in the order it chose (after `stats.opt` or the fixed
    heuristics), one per line, or on the same line after `::` when there is one."""
    requests, current, block = [], None, None
    for line in log_text.splitlines():
        if block is not None:
            if line[:1].isspace() and line.strip():
                block.append(" ".join(line.split()))
                continue
            current.append(" ; ".join(block))
            block = None
        if REQUEST.search(line):
            current = []
            requests.append(current)
            continue
        m = EXECUTE.search(line)
        if m and current is not None:
            rest = m.group(1).strip()
            if rest.startswith("::"):
                current.append(" ".join(rest[2:].split()))
            else:
                block = []
    if block is not None:
        current.append(" ; ".join(block))
    return requests


def collect_plans_and_answers(args, dbs, param_sets, logdir):
    """Runs every query once on each database through a Fuseki that logs its join orders.
    Returns {db: {(query, i): [join order, ...]}} and {db: {(query, i): answer key}}."""
    servers = start_servers(args, dbs, logdir, "plans", ("--set", "arq:logExec=all"))
    answers = {db: {} for db in ORDER}
    asked = []
    try:
        for name, template in QUERIES.items():
            for i, params in enumerate(param_sets):
                asked.append((name, i))
                for db in ORDER:
                    _, body = servers[db].query(instantiate(template, params), accept_for(name))
                    answers[db][(name, i)] = answer_key(name, body)
    finally:
        stop_servers(servers)
    plans = {}
    for db in ORDER:
        with open(servers[db].log_path, errors="replace") as f:
            per_request = join_orders(f.read())
        if len(per_request) != len(asked):
            raise RuntimeError("%s: %d query requests in the log, %d sent" % (
                servers[db].log_path, len(per_request), len(asked)))
        plans[db] = dict(zip(asked, per_request))
    return plans, answers


def time_fuseki(args, dbs, param_sets, logdir):
    """{(round, query, i, db): [seconds, ...]}: per round fresh servers, `warmup` passes over
    every query, then `runs` passes with the databases interleaved query by query."""
    samples = {}
    for r in range(args.rounds):
        for db in ORDER:
            read_into_page_cache(dbs[db])
        log("Fuseki round %d/%d" % (r + 1, args.rounds))
        servers = start_servers(args, dbs, logdir, "round%d" % (r + 1))
        try:
            for _ in range(args.warmup):
                for name, template in QUERIES.items():
                    for params in param_sets:
                        for db in ORDER:
                            servers[db].query(instantiate(template, params), accept_for(name))
            for k in range(args.runs):
                for name, template in QUERIES.items():
                    for i, params in enumerate(param_sets):
                        for db in rotate(ORDER, r + k + i):
                            secs, _ = servers[db].query(instantiate(template, params), accept_for(name))
                            samples.setdefault((r, name, i, db), []).append(secs)
        finally:
            stop_servers(servers)
    return samples


def time_tdbquery(args, dbs, param_sets, tmp):
    """{(round, query, i, db): [seconds, ...]}: one `tdb2.tdbquery --repeat=W,N --time` JVM
    per query, parameter set and database (Jena prints each run's time; the warm-up runs are
    dropped), the databases interleaved."""
    samples = {}
    env = dict(os.environ, JENA_HOME=args.jena_home)
    for r in range(args.rounds):
        for db in ORDER:
            read_into_page_cache(dbs[db])
        log("tdbquery round %d/%d" % (r + 1, args.rounds))
        for name, template in QUERIES.items():
            for i, params in enumerate(param_sets):
                path = os.path.join(tmp, "%s-%d.rq" % (name, i))
                with open(path, "w") as f:
                    f.write(instantiate(template, params))
                for db in rotate(ORDER, r + i):
                    cmd = [os.path.join(args.jena_home, "bin", "tdb2.tdbquery"), "--loc", dbs[db],
                           "--repeat=%d,%d" % (args.tdbquery_warmup, args.runs), "--time", "--results=CSV",
                           *union_args(args), "--query", path]
                    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
                    if p.returncode != 0:
                        raise RuntimeError("tdbquery %s on %s failed: %s" % (name, db, p.stderr[-2000:]))
                    secs = [float(line.split()[1]) for line in (p.stdout + p.stderr).splitlines()
                            if line.startswith("Time: ")]
                    if len(secs) < args.runs:
                        raise RuntimeError("tdbquery %s printed %d times, expected %d" % (name, len(secs), args.runs))
                    samples[(r, name, i, db)] = secs[-args.runs:]
    return samples


RATIOS = {"ours / xloader": (OURS, XLOADER), "without / with stats.opt": (NOSTATS, OURS)}


def summarise(samples, names=None):
    """Per query and database, the mean over parameter sets of each set's median time (ms),
    over all rounds and per round; the ratios of RATIOS per query, overall and per round;
    and their geometric means over the queries."""
    names = names or list(QUERIES)
    rounds = sorted({k[0] for k in samples})
    params = sorted({k[2] for k in samples})

    def ms(name, db, only_round=None):
        medians = []
        for i in params:
            xs = [x for r in rounds if only_round in (None, r) for x in samples.get((r, name, i, db), [])]
            medians.append(statistics.median(xs) * 1000.0)
        return sum(medians) / len(medians)

    out = {"ms": {}, "ratios": {}, "round_ratios": {}, "geomean": {}, "round_geomeans": {}}
    for name in names:
        out["ms"][name] = {db: ms(name, db) for db in ORDER}
        per_round = {r: {db: ms(name, db, r) for db in ORDER} for r in rounds}
        out["ratios"][name] = {k: out["ms"][name][a] / out["ms"][name][b] for k, (a, b) in RATIOS.items()}
        out["round_ratios"][name] = {k: [per_round[r][a] / per_round[r][b] for r in rounds]
                                     for k, (a, b) in RATIOS.items()}
    for k in RATIOS:
        out["geomean"][k] = statistics.geometric_mean([out["ratios"][n][k] for n in names])
        out["round_geomeans"][k] = [statistics.geometric_mean([out["round_ratios"][n][k][j] for n in names])
                                    for j in range(len(rounds))]
    return out


def same_orders(plans, name, a, b):
    keys = [k for k in plans[a] if k[0] == name]
    return all(plans[a][k] == plans[b][k] for k in keys)


def stats_verdict(ratio, round_ratios, same_plan, tolerance):
    """What `stats.opt` did to one query, from without/with (above 1: faster with it).
    A difference counts only beyond the tolerance overall and in every round (a query of a
    few milliseconds varies by more than 2x between runs on a loaded machine); where the join
    orders are the same with and without the file, it cannot have done anything."""
    if same_plan:
        return "same join orders"
    if max(ratio, *round_ratios) < 1 - tolerance:
        return "HURTS"
    if min(ratio, *round_ratios) > 1 + tolerance:
        return "helps"
    return "within noise"


def speed_verdict(ratio, round_ratios, tolerance):
    """Ours against xloader's, from ours/xloader (above 1: ours slower), by the same rule."""
    if min(ratio, *round_ratios) > 1 + tolerance:
        return "SLOWER"
    if max(ratio, *round_ratios) < 1 - tolerance:
        return "faster"
    return "within noise"


def fmt_ratio(x, xs):
    return "%.2f (%.2f–%.2f)" % (x, min(xs), max(xs))


def render_route(summary, plans, tolerance):
    out = ["| query | rdf-bulkload ms | tdb2.xloader ms | without stats.opt ms | ours / xloader (rounds) | "
           "vs xloader | without / with (rounds) | join orders | stats.opt |",
           "|---|---:|---:|---:|---:|---|---:|---|---|"]
    flags = {"SLOWER": [], "HURTS": []}
    for name, ms in summary["ms"].items():
        r, rr = summary["ratios"][name], summary["round_ratios"][name]
        same_stats = same_orders(plans, name, OURS, NOSTATS)
        same_xl = same_orders(plans, name, OURS, XLOADER)
        orders = ("same on all three" if same_stats and same_xl else
                  "differ: %s" % ", ".join(w for w, same in (("with/without stats", same_stats),
                                                            ("ours/xloader", same_xl)) if not same))
        sv = speed_verdict(r["ours / xloader"], rr["ours / xloader"], tolerance)
        st = stats_verdict(r["without / with stats.opt"], rr["without / with stats.opt"], same_stats, tolerance)
        for v in (sv, st):
            if v in flags:
                flags[v].append(name)
        out.append("| %s | %.1f | %.1f | %.1f | %s | %s | %s | %s | %s |" % (
            name, ms[OURS], ms[XLOADER], ms[NOSTATS],
            fmt_ratio(r["ours / xloader"], rr["ours / xloader"]), sv,
            fmt_ratio(r["without / with stats.opt"], rr["without / with stats.opt"]), orders, st))
    g, rg = summary["geomean"], summary["round_geomeans"]
    out += ["", "Geometric mean over the queries: ours / xloader **%s** (below 1: ours faster); "
            "without / with stats.opt **%s** (above 1: the statistics help)." % (
                fmt_ratio(g["ours / xloader"], rg["ours / xloader"]),
                fmt_ratio(g["without / with stats.opt"], rg["without / with stats.opt"])),
            "", "Ours slower than xloader's beyond the noise on: %s. stats.opt hurts on: %s." % (
                ", ".join(flags["SLOWER"]) or "no query", ", ".join(flags["HURTS"]) or "no query")]
    return out, flags


def render(meta, by_route, plans):
    out = ["# BSBM explore queries: %s" % meta["dataset_name"], ""]
    out += ["- %s; %d parameter sets per query (seed %d); %d rounds, each with fresh JVMs, the "
            "databases' files read into the page cache and the databases interleaved; per round %d "
            "warm-up passes, then %d timed runs (tdbquery: %d warm-up runs in each JVM). Times: mean "
            "over the parameter sets of the median, ms. Ratios: over all rounds, then (min–max over "
            "rounds). A verdict needs a ratio beyond 1 ± %d%% overall and in every round. Jena %s." % (
                meta["dataset"], meta["params"], meta["seed"], meta["rounds"], meta["warmup"], meta["runs"],
                meta["tdbquery_warmup"], round(meta["tolerance"] * 100), JENA_VERSION),
            "- machine: %s, load average at start %s, %s" % (meta["machine"], meta["load"], meta["date"])]
    if meta["union_default_graph"]:
        out += ["- the queries ask the union of the named graphs (`tdb:unionDefaultGraph=true`): TDB2 runs "
                "their patterns over the quad indexes, with the same reordering and the same `stats.opt`"]
    all_flags = {}
    for route, summary in by_route.items():
        lines, flags = render_route(summary, plans, meta["tolerance"])
        out += ["", "## Through %s" % route, ""] + lines
        all_flags[route] = flags
    return "\n".join(out) + "\n", all_flags


def ensure_db(kind, args, dataset, work):
    """Builds (once per input and loader) the database `kind` of the dataset."""
    db = os.path.join(work, kind)
    stamp_path = db + ".stamp"
    st = os.stat(dataset)
    loader = os.path.realpath(args.rdf_bulkload_bin)
    stamp = {"dataset": os.path.abspath(dataset), "size": st.st_size, "mtime": st.st_mtime}
    if kind == "rdf-bulkload":
        lst = os.stat(loader)
        stamp["loader"] = [loader, lst.st_size, lst.st_mtime]
    if os.path.isdir(db) and os.path.exists(stamp_path):
        with open(stamp_path) as f:
            if json.load(f) == stamp:
                return db
    shutil.rmtree(db, ignore_errors=True)
    log("loading %s into %s" % (dataset, db))
    env = dict(os.environ, JENA_HOME=args.jena_home, JVM_ARGS=args.jvm_args)
    if kind == "rdf-bulkload":
        cmd = [loader, "load", "--loc", db, "--progress-interval", "60", dataset]
    else:
        tmp = db + ".tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        cmd = [os.path.join(args.jena_home, "bin", "tdb2.xloader"), "--loc", db, "--tmpdir", tmp, dataset]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("%s exited %d:\n%s" % (cmd[0], r.returncode, r.stderr[-4000:]))
    shutil.rmtree(db + ".tmp", ignore_errors=True)
    with open(stamp_path, "w") as f:
        json.dump(stamp, f)
    return db


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", default=os.path.join(SHARED, "datasets", "bsbm-1m.nt.gz"),
                    help="a BSBM dump (N-Triples, any compression the loaders read)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds, each with fresh JVMs")
    ap.add_argument("--runs", type=int, default=5, help="timed runs of every query and parameter set per round")
    ap.add_argument("--warmup", type=int, default=2, help="Fuseki: warm-up passes over all queries per round")
    ap.add_argument("--tdbquery-warmup", type=int, default=3, help="tdbquery: warm-up runs in each JVM")
    ap.add_argument("--params", type=int, default=2, help="parameter sets per query")
    ap.add_argument("--seed", type=int, default=20261125)
    ap.add_argument("--tolerance", type=float, default=0.10,
                    help="a ratio within 1 +- this is not a difference")
    ap.add_argument("--workdir", default=os.path.join(CACHE, "bench-queries"))
    ap.add_argument("--results", default=os.path.join(REPO, "bench", "results"))
    ap.add_argument("--rdf-bulkload-bin", default=os.environ.get("RDF_BULKLOAD") or os.path.join(
        REPO, "loader-image", "target", "release", "rdf-bulkload"))
    ap.add_argument("--jena-home", default=os.environ.get("JENA_HOME") or os.path.join(
        CACHE, "jena-%s" % JENA_VERSION, "apache-jena-%s" % JENA_VERSION))
    ap.add_argument("--fuseki-jar", default=os.environ.get("RDF_BULKLOAD_FUSEKI_JAR") or os.path.join(
        CACHE, "jena-%s" % JENA_VERSION, "jena-fuseki-server-%s.jar" % JENA_VERSION))
    ap.add_argument("--jvm-args", default="-Xmx2G", help="JVM_ARGS for xloader")
    ap.add_argument("--fuseki-heap", default="2G")
    ap.add_argument("--routes", default="fuseki,tdbquery", help="fuseki, tdbquery or both")
    ap.add_argument("--union-default-graph", action=argparse.BooleanOptionalAction, default=None,
                    help="query the union of the named graphs (tdb:unionDefaultGraph); "
                         "default: on for a .nq or .trig dataset")
    args = ap.parse_args(argv)
    if not os.path.isfile(args.dataset):
        ap.error("no dataset at %s: pass --dataset with a BSBM dump (the default is the one "
                 "bench/run.py's bsbm-1m uses)" % args.dataset)
    if args.union_default_graph is None:
        args.union_default_graph = any(".%s" % ext in os.path.basename(args.dataset) for ext in ("nq", "trig"))

    name = os.path.basename(args.dataset).split(".")[0]
    work = os.path.join(args.workdir, name)
    os.makedirs(work, exist_ok=True)
    os.makedirs(args.results, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    logdir = os.path.join(args.results, "queries-%s-%s-logs" % (name, stamp))
    os.makedirs(logdir)
    dbs = {OURS: ensure_db("rdf-bulkload", args, args.dataset, work),
           XLOADER: ensure_db("tdb2.xloader", args, args.dataset, work)}
    # Our database without its statistics (a fresh copy each run: Fuseki may write to it).
    nostats = os.path.join(work, "rdf-bulkload-nostats")
    shutil.rmtree(nostats, ignore_errors=True)
    shutil.copytree(dbs[OURS], nostats)
    for data in os.listdir(nostats):
        if data.startswith("Data-"):
            os.remove(os.path.join(nostats, data, "stats.opt"))
    dbs[NOSTATS] = nostats

    drawer = Fuseki(args.fuseki_jar, dbs[XLOADER], os.path.join(logdir, "fuseki-parameters.log"), args.fuseki_heap,
                    union_args(args))
    try:  # parameters from the reference database, so that ours cannot choose its own questions
        param_sets = draw_parameters(drawer, args.seed, args.params)
    finally:
        drawer.stop()
    log("join orders and answers")
    plans, answers = collect_plans_and_answers(args, dbs, param_sets, logdir)
    wrong = sorted({q for (q, i), a in answers[XLOADER].items() for db in ORDER if answers[db][(q, i)] != a})
    if wrong:
        log("different answers from the databases to %s" % ", ".join(wrong))
        return 1
    meta = {"dataset": args.dataset, "dataset_name": name, "params": args.params, "seed": args.seed,
            "rounds": args.rounds, "runs": args.runs, "warmup": args.warmup,
            "tdbquery_warmup": args.tdbquery_warmup, "tolerance": args.tolerance,
            "machine": "%d cores" % os.cpu_count(), "load": "%.2f" % os.getloadavg()[0],
            "union_default_graph": args.union_default_graph,
            "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}
    routes = args.routes.split(",")
    samples = {}
    if "fuseki" in routes:
        samples["Fuseki (SPARQL over HTTP)"] = time_fuseki(args, dbs, param_sets, logdir)
    if "tdbquery" in routes:
        samples["tdb2.tdbquery"] = time_tdbquery(args, dbs, param_sets, logdir)
    by_route = {route: summarise(s) for route, s in samples.items()}
    text, flags = render(meta, by_route, plans)
    path = os.path.join(args.results, "queries-%s-%s" % (name, stamp))
    with open(path + ".md", "w") as f:
        f.write(text)
    with open(path + ".json", "w") as f:
        json.dump({"meta": meta, "parameters": param_sets, "flags": flags,
                   "join_orders": {db: {"%s-%d" % k: v for k, v in p.items()} for db, p in plans.items()},
                   "summary": by_route,
                   "samples_s": {route: {"%d|%s|%d|%s" % k: v for k, v in s.items()} for route, s in samples.items()}},
                  f, indent=1)
    print(text)
    log("report: %s.md (and .json; logs in %s)" % (path, logdir))
    return 0


if __name__ == "__main__":
    sys.exit(main())

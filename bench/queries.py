#!/usr/bin/env python3
"""Query speed: the BSBM explore use case on rdf-bulkload's database and on Jena's
`tdb2.xloader` database of the same data, in one run (`make bench-queries`).

The eleven queries of the BSBM 3.1 explore use case (Q1-Q5, Q7-Q12; Q6 was dropped from the
use case in 3.0) are written here from the specification's text. Their parameters are drawn
from the data with a fixed seed, so two runs ask the same questions. Each database is served
by Fuseki in turn, which is how users query it; every query is sent once to warm the caches,
then `--runs` times. The report gives the median per query and the ratio to xloader's
database, plus the same queries on our database with `stats.opt` removed, which shows what the
statistics the loader writes do for Jena's optimizer: they must help, never hurt. The answers
of both databases are compared (the same rows for SELECT, the same number of triples for
CONSTRUCT/DESCRIBE): a query that answers differently is an error, not a timing.
"""

import argparse
import datetime as dt
import json
import os
import random
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


class Fuseki:
    """Fuseki serving one TDB2 database on 127.0.0.1, read-only use."""

    def __init__(self, jar, db, logdir, heap):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.log = open(os.path.join(logdir, "fuseki-%s.log" % os.path.basename(db)), "w")
        self.proc = subprocess.Popen(
            ["java", "-Xmx" + heap, "-jar", jar, "--tdb2", "--loc", db, "--localhost", "--port", str(self.port), "/ds"],
            stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.time() + 120
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError("Fuseki exited; see %s" % self.log.name)
            try:
                urllib.request.urlopen("http://127.0.0.1:%d/$/ping" % self.port, timeout=2).read()
                return
            except OSError:
                if time.time() > deadline:
                    self.stop()
                    raise RuntimeError("Fuseki did not start; see %s" % self.log.name)
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


def run_suite(fuseki, param_sets, runs):
    """Seconds per query name (every run of every parameter set) and the answers."""
    times, answers = {}, {}
    for name, template in QUERIES.items():  # warm-up: each query once with each parameter set
        for i, params in enumerate(param_sets):
            _, body = fuseki.query(instantiate(template, params), accept_for(name))
            answers[(name, i)] = answer_key(name, body)
    for _ in range(runs):
        for name, template in QUERIES.items():
            for params in param_sets:
                secs, _ = fuseki.query(instantiate(template, params), accept_for(name))
                times.setdefault(name, []).append(secs)
    return times, answers


def run_tdbquery(jena_home, db, param_sets, runs, tmp):
    """Seconds per query name through `tdb2.tdbquery --repeat=1,RUNS --time`: one JVM per query
    and parameter set, one warm-up run, then the timed runs (Jena prints each run's time)."""
    times = {}
    for name, template in QUERIES.items():
        for i, params in enumerate(param_sets):
            path = os.path.join(tmp, "%s-%d.rq" % (name, i))
            with open(path, "w") as f:
                f.write(instantiate(template, params))
            r = subprocess.run([os.path.join(jena_home, "bin", "tdb2.tdbquery"), "--loc", db, "--repeat=1,%d" % runs,
                                "--time", "--results=CSV", "--query", path],
                               capture_output=True, text=True, env=dict(os.environ, JENA_HOME=jena_home))
            if r.returncode != 0:
                raise RuntimeError("tdbquery %s failed: %s" % (name, r.stderr[-2000:]))
            secs = [float(line.split()[1]) for line in (r.stdout + r.stderr).splitlines()
                    if line.startswith("Time: ")]
            if len(secs) < runs:
                raise RuntimeError("tdbquery %s printed %d times, expected %d" % (name, len(secs), runs))
            times.setdefault(name, []).extend(secs[-runs:])
    return times


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


def median_ms(xs):
    return statistics.median(xs) * 1000.0


def render(meta, by_route, order):
    out = ["# BSBM explore queries: %s" % meta["dataset_name"], ""]
    out += ["- %s; %d parameter sets per query (seed %d), %d timed runs each after one warm-up; "
            "median milliseconds per query, Jena %s" % (
                meta["dataset"], meta["params"], meta["seed"], meta["runs"], JENA_VERSION),
            "- machine: %s, %s" % (meta["machine"], meta["date"])]
    for route, results in by_route.items():
        out += ["", "## Through %s" % route, ""] + render_table(results, order)
    return "\n".join(out) + "\n"


def render_table(results, order):
    base = results["tdb2.xloader"]
    out = []
    out += ["| query | " + " | ".join(order) + " | rdf-bulkload / xloader | without stats.opt / with |",
            "|---|" + "---:|" * len(order) + "---:|---:|"]
    ratios, stats_ratios = [], []
    for name in QUERIES:
        cells = ["%.1f" % median_ms(results[db][name]) for db in order]
        r = median_ms(results["rdf-bulkload"][name]) / median_ms(base[name])
        s = median_ms(results["rdf-bulkload without stats.opt"][name]) / median_ms(results["rdf-bulkload"][name])
        ratios.append(r)
        stats_ratios.append(s)
        out.append("| %s | %s | %.2f | %.2f |" % (name, " | ".join(cells), r, s))
    gm = statistics.geometric_mean
    out += ["", "Geometric mean of the ratios: rdf-bulkload / xloader **%.2f** (below 1: faster); "
            "without stats.opt / with **%.2f** (above 1: the statistics help)." % (gm(ratios), gm(stats_ratios))]
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", default=os.path.join(SHARED, "datasets", "bsbm-1m.nt.gz"),
                    help="a BSBM dump (N-Triples, any compression the loaders read)")
    ap.add_argument("--runs", type=int, default=5, help="timed runs of every query and parameter set")
    ap.add_argument("--params", type=int, default=4, help="parameter sets per query")
    ap.add_argument("--seed", type=int, default=20261125)
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
    args = ap.parse_args(argv)

    name = os.path.basename(args.dataset).split(".")[0]
    work = os.path.join(args.workdir, name)
    os.makedirs(work, exist_ok=True)
    os.makedirs(args.results, exist_ok=True)
    dbs = {"rdf-bulkload": ensure_db("rdf-bulkload", args, args.dataset, work),
           "tdb2.xloader": ensure_db("tdb2.xloader", args, args.dataset, work)}
    # Our database without its statistics (a fresh copy each run: Fuseki may write to it).
    nostats = os.path.join(work, "rdf-bulkload-nostats")
    shutil.rmtree(nostats, ignore_errors=True)
    shutil.copytree(dbs["rdf-bulkload"], nostats)
    for data in os.listdir(nostats):
        if data.startswith("Data-"):
            os.remove(os.path.join(nostats, data, "stats.opt"))
    dbs["rdf-bulkload without stats.opt"] = nostats
    order = ["rdf-bulkload", "tdb2.xloader", "rdf-bulkload without stats.opt"]

    fuseki = Fuseki(args.fuseki_jar, dbs["tdb2.xloader"], work, args.fuseki_heap)
    try:  # parameters from the reference database, so that ours cannot choose its own questions
        param_sets = draw_parameters(fuseki, args.seed, args.params)
    finally:
        fuseki.stop()
    routes = args.routes.split(",")
    by_route, answers = {}, {}
    if "fuseki" in routes:
        results = by_route["Fuseki (SPARQL over HTTP)"] = {}
        for db in order:
            log("querying %s through Fuseki" % db)
            fuseki = Fuseki(args.fuseki_jar, dbs[db], work, args.fuseki_heap)
            try:
                results[db], answers[db] = run_suite(fuseki, param_sets, args.runs)
            finally:
                fuseki.stop()
        wrong = sorted({q for (q, i), a in answers["tdb2.xloader"].items()
                        for db in order if answers[db][(q, i)] != a})
        if wrong:
            log("different answers from the databases to %s" % ", ".join(wrong))
            return 1
    if "tdbquery" in routes:
        results = by_route["tdb2.tdbquery"] = {}
        for db in order:
            log("querying %s through tdb2.tdbquery" % db)
            results[db] = run_tdbquery(args.jena_home, dbs[db], param_sets, args.runs, work)
    meta = {"dataset": args.dataset, "dataset_name": name, "params": args.params, "seed": args.seed,
            "runs": args.runs, "machine": "%d cores" % os.cpu_count(),
            "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}
    text = render(meta, by_route, order)
    path = os.path.join(args.results, "queries-%s-%s.md" % (name, time.strftime("%Y%m%d-%H%M%S")))
    with open(path, "w") as f:
        f.write(text)
    print(text)
    log("report: %s" % path)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Suite (b): the same SPARQL queries give the same answers on our database and on xloader's,
through tdb2.tdbquery (TSV and JSON results) and through Fuseki over HTTP on loopback.

BSBM-style queries run on bsbm-1m / bsbm-1m-ng; the edge-corpus queries use constants that
must hit inlined NodeIds (numbers, dates, dateTimes with time zones, booleans) or hashed terms
after Jena's normalisation (language tags, xsd:string). A constant that our loader stored
differently from Jena (inline vs node table) silently matches nothing, so each answer is
compared with xloader's and must not be empty on xloader's database.
xloader-side answers are cached with the reference database (keyed by the query text).
"""
import collections
import json
import os
import re

import pytest

from conftest import ROOT, Fuseki, file_lock

PREFIXES = '''PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
PREFIX dc: <http://purl.org/dc/elements/1.1/>
PREFIX rev: <http://purl.org/stuff/rev#>
PREFIX foaf: <http://xmlns.com/foaf/0.1/>
PREFIX bsbm: <http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/>
PREFIX inst: <http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/instances/>
PREFIX p1: <http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/instances/dataFromProducer1/>
PREFIX il: <http://example.org/inline/>
PREFIX lit: <http://example.org/lit/>
PREFIX d: <http://example.org/d/>
PREFIX g: <http://example.org/g/>
PREFIX ttl: <http://example.org/ttl/>
PREFIX trig: <http://example.org/trig/>
'''

# BSBM explore queries (Q1-Q5, Q7-Q10 shapes), constants taken from the dataset.
BSBM = {
    'q1-products-by-type-features-numeric': '''
SELECT DISTINCT ?product ?label WHERE {
  ?product rdfs:label ?label ; a inst:ProductType71 ;
           bsbm:productFeature ?f ; bsbm:productPropertyNumeric1 ?value1 .
  FILTER (?value1 > 500)
} ORDER BY ?label ?product LIMIT 25''',
    'q2-product-details': '''
SELECT ?label ?comment ?producer ?f ?p1 ?p2 ?p3 ?n1 ?n2 WHERE {
  p1:Product12 rdfs:label ?label ; rdfs:comment ?comment ; bsbm:producer ?p ;
               bsbm:productFeature ?f ; bsbm:productPropertyTextual1 ?p1 ;
               bsbm:productPropertyTextual2 ?p2 ; bsbm:productPropertyTextual3 ?p3 ;
               bsbm:productPropertyNumeric1 ?n1 ; bsbm:productPropertyNumeric2 ?n2 .
  ?p rdfs:label ?producer .
}''',
    'q3-optional-negation': '''
SELECT ?product ?label WHERE {
  ?product rdfs:label ?label ; a inst:ProductType62 ; bsbm:productPropertyNumeric1 ?p1 .
  FILTER (?p1 > 1000)
  OPTIONAL { ?product bsbm:productPropertyNumeric3 ?p3 . FILTER (?p3 < 200) }
  FILTER (!bound(?p3))
} ORDER BY ?label ?product LIMIT 20''',
    'q4-union': '''
SELECT DISTINCT ?product ?label ?n WHERE {
  { ?product rdfs:label ?label ; a inst:ProductType57 ; bsbm:productPropertyNumeric1 ?n . FILTER (?n > 1500) }
  UNION
  { ?product rdfs:label ?label ; a inst:ProductType69 ; bsbm:productPropertyNumeric2 ?n . FILTER (?n > 1500) }
} ORDER BY ?label ?product LIMIT 30''',
    'q5-similar-products': '''
SELECT DISTINCT ?product ?label WHERE {
  ?product rdfs:label ?label . FILTER (p1:Product12 != ?product)
  p1:Product12 bsbm:productFeature ?f . ?product bsbm:productFeature ?f .
  p1:Product12 bsbm:productPropertyNumeric1 ?o1 . ?product bsbm:productPropertyNumeric1 ?s1 .
  FILTER (?s1 < (?o1 + 120) && ?s1 > (?o1 - 120))
} ORDER BY ?label ?product LIMIT 5''',
    'q7-offers-and-reviews': '''
SELECT ?label ?offer ?price ?vendor ?review ?title ?r1 WHERE {
  p1:Product12 rdfs:label ?label .
  OPTIONAL { ?offer bsbm:product p1:Product12 ; bsbm:price ?price ; bsbm:vendor ?vendor ;
                    bsbm:validTo ?date . FILTER (?date > "2008-06-20T00:00:00"^^xsd:dateTime) }
  OPTIONAL { ?review bsbm:reviewFor p1:Product12 ; dc:title ?title .
             OPTIONAL { ?review bsbm:rating1 ?r1 } }
}''',
    'q8-reviews-english': '''
SELECT ?review ?title ?text ?date ?r1 ?r2 WHERE {
  ?product a inst:ProductType71 .
  ?review bsbm:reviewFor ?product ; dc:title ?title ; rev:text ?text ; bsbm:reviewDate ?date .
  FILTER langMatches(lang(?text), "EN")
  OPTIONAL { ?review bsbm:rating1 ?r1 } OPTIONAL { ?review bsbm:rating2 ?r2 }
} ORDER BY DESC(?date) ?review LIMIT 20''',
    'q9-describe-reviewer-as-select': '''
SELECT ?p ?o WHERE {
  ?review bsbm:reviewFor p1:Product12 ; rev:reviewer ?x . ?x ?p ?o .
}''',
    'q10-cheap-fast-offers': '''
SELECT DISTINCT ?offer ?price WHERE {
  ?offer bsbm:product p1:Product12 ; bsbm:vendor ?vendor ; bsbm:deliveryDays ?dd ;
         bsbm:price ?price ; bsbm:validTo ?date .
  ?vendor bsbm:country <http://downlode.org/rdf/iso-3166/countries#US> .
  FILTER (?dd <= 5 && ?date > "2008-06-01T00:00:00"^^xsd:dateTime)
} ORDER BY xsd:double(str(?price)) ?offer LIMIT 10''',
    # constants that must hit inlined values in BSBM
    'inline-integer-rating': 'SELECT (COUNT(*) AS ?n) WHERE { ?r bsbm:rating1 5 }',
    'inline-integer-property': 'SELECT ?p WHERE { ?p bsbm:productPropertyNumeric1 831 }',
    'inline-datetime': 'SELECT ?o WHERE { ?o bsbm:validTo "2008-09-11T00:00:00"^^xsd:dateTime }',
    'inline-date': 'SELECT ?s WHERE { ?s dc:date "2000-07-04"^^xsd:date }',
    'lang-literal-count': 'SELECT (COUNT(*) AS ?n) WHERE { ?r rev:text ?t FILTER(lang(?t) = "en") }',
    'aggregate-per-type': '''
SELECT ?type (COUNT(?p) AS ?n) (AVG(?v) AS ?avg) WHERE {
  ?p a ?type ; bsbm:productPropertyNumeric1 ?v } GROUP BY ?type ORDER BY ?type''',
    'count-all': 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }',
}

BSBM_NG = {
    'graphs-by-size': 'SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g ORDER BY DESC(?n) ?g LIMIT 10',
    'provenance-dates': '''
SELECT ?graph ?date WHERE { GRAPH <localhost:provenanceData> { ?graph dc:date ?date } }
ORDER BY ?graph LIMIT 50''',
    'review-in-graph': '''
SELECT ?g ?review ?r1 WHERE { GRAPH ?g { ?review bsbm:reviewFor p1:Product12 ; bsbm:rating1 ?r1 } }''',
    'inline-in-named-graph': '''
SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?r bsbm:rating2 7 } }''',
    'default-graph-is-empty-or-not': 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }',
    'count-quads': 'SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }',
}

# Edge corpus (all files in one load). Every constant here must be matched by NodeId.
EDGE = {
    'integer-42-all-forms': 'SELECT ?s WHERE { ?s il:integer 42 }',
    'integer-via-007': 'SELECT ?s WHERE { ?s d:int "007"^^xsd:integer }',
    'integer-max-inline': 'SELECT ?s WHERE { ?s il:integer 36028797018963967 }',
    'integer-not-inlined': 'SELECT ?s WHERE { ?s il:integer 36028797018963968 }',
    'integer-20-chars': 'SELECT ?s WHERE { ?s il:integer "+0000000000000000042"^^xsd:integer }',
    'integer-subtypes': 'SELECT ?p ?o WHERE { ?s ?p ?o FILTER(datatype(?o) IN (xsd:byte, xsd:unsignedByte, xsd:long, xsd:unsignedLong)) }',
    'byte-127': 'SELECT ?s WHERE { ?s il:byte "127"^^xsd:byte }',
    'decimal-1.5': 'SELECT ?s ?p WHERE { ?s ?p 1.5 }',
    'decimal-1.50-distinct': 'SELECT ?s ?p WHERE { ?s ?p 1.50 }',
    'decimal-max-inline': 'SELECT ?s WHERE { ?s il:decimal "140737488355327"^^xsd:decimal }',
    'double-1e0': 'SELECT ?s ?p WHERE { ?s ?p 1.0e0 }',
    'double-inf-nan': 'SELECT ?s ?o WHERE { ?s il:double ?o FILTER(str(?o) IN ("INF", "-INF", "NaN")) }',
    'double-not-inlined-1e78': 'SELECT ?s WHERE { ?s il:double "1e78"^^xsd:double }',
    'double-subnormal': 'SELECT ?s WHERE { ?s il:double "4.9E-324"^^xsd:double }',
    'float-rounding': 'SELECT ?s ?o WHERE { ?s il:float ?o FILTER(?o = "1.0000001"^^xsd:float) }',
    'boolean-true': 'SELECT ?s ?p WHERE { ?s ?p true }',
    'boolean-1': 'SELECT ?s ?p WHERE { ?s ?p "1"^^xsd:boolean }',
    'boolean-invalid-TRUE': 'SELECT ?s WHERE { ?s ?p "TRUE"^^xsd:boolean }',
    'date': 'SELECT ?s ?p WHERE { ?s ?p "2020-01-02"^^xsd:date }',
    'date-with-tz': 'SELECT ?s WHERE { ?s ?p "2020-01-02+01:00"^^xsd:date }',
    'datetime-Z': 'SELECT ?s ?p WHERE { ?s ?p "2020-01-02T03:04:05Z"^^xsd:dateTime }',
    'datetime-plus-00': 'SELECT ?s ?p WHERE { ?s ?p "2020-01-02T03:04:05+00:00"^^xsd:dateTime }',
    'datetime-+05:30': 'SELECT ?s WHERE { ?s ?p "2020-01-02T03:04:05+05:30"^^xsd:dateTime }',
    'datetime-+14:00': 'SELECT ?s WHERE { ?s ?p "2020-01-02T03:04:05+14:00"^^xsd:dateTime }',
    'datetime-minus-00:15-quirk': 'SELECT ?s WHERE { ?s ?p "2020-01-02T03:04:05-00:15"^^xsd:dateTime }',
    'datetime-minus-00:30-quirk': 'SELECT ?s WHERE { ?s ?p "2020-01-02T03:04:05.5-00:30"^^xsd:dateTime }',
    'datetime-millis': 'SELECT ?s WHERE { ?s ?p "2020-01-02T03:04:05.12Z"^^xsd:dateTime }',
    'datetime-submillis-not-inlined': 'SELECT ?s WHERE { ?s ?p "2020-01-02T03:04:05.1234Z"^^xsd:dateTime }',
    'datetime-year-0000': 'SELECT ?s WHERE { ?s ?p "0000-01-01T00:00:00"^^xsd:dateTime }',
    'datetime-7999': 'SELECT ?s WHERE { ?s ?p "7999-12-31T23:59:59.999+14:00"^^xsd:dateTime }',
    'datetime-hour-24': 'SELECT ?s WHERE { ?s ?p "2020-01-02T24:00:00"^^xsd:dateTime }',
    'datetimestamp-fallback': 'SELECT ?s ?o WHERE { ?s il:dateTimeStamp ?o }',
    'datetime-range-filter': '''SELECT ?s ?o WHERE { ?s il:dateTime ?o
        FILTER(?o >= "2020-01-02T00:00:00Z"^^xsd:dateTime && ?o < "2020-01-03T00:00:00Z"^^xsd:dateTime) }''',
    'lang-en-gb-lowercase-query': 'SELECT ?s ?p WHERE { ?s ?p "colour"@en-gb }',
    'lang-script-region': 'SELECT ?s WHERE { ?s ?p "abc"@EN-LATN-US }',
    'lang-zh-hant': 'SELECT ?s WHERE { ?s ?p "abc"@zh-HANT-tw }',
    'lang-private-use': 'SELECT ?s WHERE { ?s ?p "abc"@x-private }',
    'lang-extension': 'SELECT ?s WHERE { ?s ?p "abc"@en-a-bbb-x-a-ccc }',
    'lang-values': 'SELECT ?o (lang(?o) AS ?l) WHERE { lit:s lit:lang ?o }',
    'xsd-string-equivalence': 'SELECT ?s ?p WHERE { ?s ?p "hello"^^xsd:string }',
    'plain-string': 'SELECT ?s ?p WHERE { ?s ?p "only typed" }',
    'unicode-string': 'SELECT ?s WHERE { ?s ?p "café 日本語 😀 Ωμέγα עברית" }',
    'escaped-string': 'SELECT ?s WHERE { ?s ?p "tab\\there\\nnewline\\rcr \\"quoted\\" back\\\\slash" }',
    'custom-datatype': 'SELECT ?s ?o WHERE { ?s lit:custom ?o }',
    'unicode-iri': 'SELECT ?o WHERE { <http://example.org/lit/iri/café/日本> ?p ?o }',
    'named-graphs': 'SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } FILTER(isIRI(?g)) } GROUP BY ?g ORDER BY ?g',
    'default-graph-spellings': 'SELECT ?o WHERE { g:s g:p ?o }',
    'graph-inline-value': 'SELECT ?g WHERE { GRAPH ?g { g:s g:n 42 } }',
    'turtle-shorthand-values': 'SELECT ?p ?o WHERE { ttl:alice ?p ?o FILTER(isLiteral(?o)) }',
    'trig-graphs': 'SELECT ?g ?o WHERE { GRAPH ?g { trig:s trig:n ?o } }',
    'numeric-order': 'SELECT ?o WHERE { ?s il:integer ?o FILTER(isNumeric(?o)) } ORDER BY ?o',
    'count-all': 'SELECT (COUNT(*) AS ?n) WHERE { { ?s ?p ?o } UNION { GRAPH ?g { ?s ?p ?o } } }',
}

_BNODE_TSV = re.compile(r'_:[^\s\t]+')


def tsv_rows(text):
    lines = [l for l in text.split('\n') if l]
    assert lines, 'no TSV header'
    return lines[0], [_BNODE_TSV.sub('_:B', l) for l in lines[1:]]


def json_rows(text):
    doc = json.loads(text)
    rows = []
    for b in doc['results']['bindings']:
        row = []
        for v in doc['head']['vars']:
            x = b.get(v)
            if x is None:
                row.append(None)
            elif x['type'] == 'bnode':
                row.append(('bnode',))
            else:
                row.append((x['type'], x['value'], x.get('datatype'), x.get('xml:lang')))
        rows.append(tuple(row))
    return doc['head']['vars'], rows


def assert_same_answers(query, ours, ref, parse):
    h1, r1 = parse(ours)
    h2, r2 = parse(ref)
    assert h1 == h2, 'result variables differ: %r vs xloader %r' % (h1, h2)
    assert r2, 'query returns nothing on xloader\'s database, so it proves nothing:\n' + query
    if 'ORDER BY' in query:
        assert r1 == r2, 'ordered answers differ:\nours    %r\nxloader %r' % (r1[:10], r2[:10])
    else:
        c1, c2 = collections.Counter(r1), collections.Counter(r2)
        assert c1 == c2, 'answers differ: only ours %r; only xloader %r' % (
            list((c1 - c2).elements())[:10], list((c2 - c1).elements())[:10])


# The queries shipped in examples/queries (complete queries, no PREFIXES added).
EXAMPLES_DIR = os.path.join(ROOT, 'examples', 'queries')
EXAMPLES = {n[:-3]: open(os.path.join(EXAMPLES_DIR, n), encoding='utf-8').read()
            for n in sorted(os.listdir(EXAMPLES_DIR)) if n.endswith('.rq')} if os.path.isdir(EXAMPLES_DIR) else {}

CASES = ([('bsbm', k) for k in BSBM] + [('bsbm_ng', k) for k in BSBM_NG] + [('edge', k) for k in EDGE]
         + [('examples', k) for k in EXAMPLES])
QUERIES = {'bsbm': BSBM, 'bsbm_ng': BSBM_NG, 'edge': EDGE, 'examples': EXAMPLES}
FIXTURES = {'bsbm': 'bsbm_nt', 'bsbm_ng': 'bsbm_nq', 'edge': 'edge_all', 'examples': 'examples_pair'}


def query_text(which, name):
    return QUERIES[which][name] if which == 'examples' else PREFIXES + QUERIES[which][name]


def _id(case):
    return '%s-%s' % case


JSON_CASES = [c for c in CASES if c[0] in ('edge', 'examples') or c[1].startswith('inline')]


@pytest.fixture(scope='module')
def tdbquery_answers(request, jena):
    """which -> {(name, format): (our answer, xloader's answer)}, every query of that dataset in
    one tdb2.tdbquery JVM per database (xloader's side cached beside the reference)."""
    done = {}

    def get(which):
        if which not in done:
            built = request.getfixturevalue(FIXTURES[which])
            keys = [(n, 'tsv') for n in QUERIES[which]] + [(n, 'json') for w, n in JSON_CASES if w == which]
            items = [(query_text(which, n), fmt) for n, fmt in keys]
            ours = jena.tdbquery_many(built.db, items)
            ref = built.qref.tdbquery_many(items)
            done[which] = dict(zip(keys, zip(ours, ref)))
        return done[which]
    return get


@pytest.mark.parametrize('case', CASES, ids=_id)
def test_tdbquery_tsv_same_answers(case, tdbquery_answers):
    which, name = case
    ours, ref = tdbquery_answers(which)[(name, 'tsv')]
    assert_same_answers(query_text(which, name), ours, ref, tsv_rows)


@pytest.mark.parametrize('case', JSON_CASES, ids=_id)
def test_tdbquery_json_same_answers(case, tdbquery_answers):
    which, name = case
    ours, ref = tdbquery_answers(which)[(name, 'json')]
    assert_same_answers(query_text(which, name), ours, ref, json_rows)


# --------------------------------------------------------------------------- Fuseki over HTTP
_servers = {}


def _ref_fuseki_answers(jena, ref, queries, workdir):
    """xloader-side Fuseki answers, cached beside the reference; a server is started only if
    some answer is missing (under the reference's lock, since Jena locks the database)."""
    import hashlib
    import os
    out, missing = {}, []
    for q in queries:
        key = hashlib.sha256(('fuseki-json\n%s' % q).encode()).hexdigest()[:24]
        p = os.path.join(ref.path, 'answers', 'fuseki-json-%s' % key)
        out[q] = p
        if not os.path.exists(p):
            missing.append((q, p))
    if missing:
        with file_lock(ref.path + '.lock'):
            srv = Fuseki(jena, ref.db, workdir).start()
            try:
                for q, p in missing:
                    os.makedirs(os.path.dirname(p), exist_ok=True)
                    text = srv.query(q)
                    with open(p + '.tmp', 'w', encoding='utf-8') as f:
                        f.write(text)
                    os.rename(p + '.tmp', p)
            finally:
                srv.stop()
    return {q: open(p, encoding='utf-8').read() for q, p in out.items()}


@pytest.fixture(scope='module')
def fuseki_pair(request, jena, tmp_path_factory):
    """which -> (Fuseki on our database, xloader answers by query); servers stopped at module end."""
    started = []

    def get(which):
        if which not in _servers:
            built = request.getfixturevalue(FIXTURES[which])
            work = str(tmp_path_factory.mktemp('fuseki-' + which))
            queries = [query_text(which, n) for n in QUERIES[which]]
            ref_answers = _ref_fuseki_answers(jena, built.qref, queries, work)
            srv = Fuseki(jena, built.db, work).start()
            started.append(srv)
            _servers[which] = (srv, ref_answers)
        return _servers[which]
    try:
        yield get
    finally:
        for s in started:
            s.stop()
        _servers.clear()


@pytest.mark.parametrize('case', CASES, ids=_id)
def test_fuseki_same_answers(case, fuseki_pair):
    which, name = case
    srv, ref_answers = fuseki_pair(which)
    q = query_text(which, name)
    assert_same_answers(q, srv.query(q), ref_answers[q], json_rows)


def test_fuseki_is_read_only(fuseki_pair):
    """The servers we start for comparison accept no updates (they serve the DB read-only)."""
    import requests
    srv, _ = fuseki_pair('edge')
    r = requests.post('http://127.0.0.1:%d/ds/update' % srv.port,
                      data={'update': 'INSERT DATA { <urn:x> <urn:y> <urn:z> }'}, timeout=60)
    assert r.status_code >= 400
    assert 'urn:x' not in srv.query('SELECT * WHERE { <urn:x> ?p ?o }')

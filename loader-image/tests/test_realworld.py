"""Suite (e): real-world RDF this project did not write, loaded by us and by Jena 5.6.0.

The datasets are vocabularies and ontologies that package registries ship (DBpedia ontology,
schema.org twice, QUDT, GeoNames + RDA, OWL/SKOS/PROV/FOAF/DC/geo/Time/DCAT/SHACL, Brick,
the LinkML metamodel, DASH, Jena's assembler vocabulary, GeoSPARQL and Jena's ont-policy as
RDF/XML), named with their registry, package, version, paths and digests in
realworld/manifest.toml and fetched at test time into the cache (realworld_fetch.py); nothing
of them is committed. For each dataset, in one load of all its files:

* the same verdict as Jena's `tdb2.tdbloader` and `tdb2.xloader` (all accept, or all refuse);
* against xloader's database: the records test_differential.py compares (node table and all
  nine indexes record for record where blank-node-free, index sizes otherwise; prefix tables;
  tdbdump equal, isomorphic with blank nodes);
* against tdbloader's database (other NodeIds: it allocates in parse order): tdbdump equal;
  with blank nodes, tdbloader's dump isomorphic to xloader's (proved once per cached
  reference) and so, by check_pair, to ours;
* the same answers, through Jena's `tdb2.tdbquery`, on all three databases to the generic
  queries in QUERIES (counts per graph, predicate, class, language tag and datatype; ORDER BY
  over literals and labels; FILTERs on numeric and date values; joins on literal values; OWL
  restrictions, rdf:List traversal, blank-node paths, SHACL property shapes; unusual IRIs).
  Each answer must be non-empty on Jena's side unless the manifest lists the query under the
  dataset's `empty` (so a constant or pattern that silently matches nothing cannot pass).

Jena's databases and answers are cached under $RDF_BULKLOAD_CACHE/jena-refs (keyed by the
inputs' digests); a warm run loads and queries only ours. With no registry reachable and CI
unset the cases skip, saying why; under CI=true a failed download fails them.
"""
import contextlib
import hashlib
import json
import os
import shutil
import time

import pytest

import realworld_fetch
import test_differential
from conftest import (EXIT_BAD_INPUT, EXIT_OK, IN_CI, JENA_VERSION, Built, Reference, assert_same_dump, dump_quads,
                      file_lock, marker_dump_to_default, sha256_file)

MANIFEST = realworld_fetch.load_manifest()
DATASETS = MANIFEST['datasets']

PREFIXES = '''PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
PREFIX owl: <http://www.w3.org/2002/07/owl#>
PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
PREFIX sh: <http://www.w3.org/ns/shacl#>
PREFIX skos: <http://www.w3.org/2004/02/skos/core#>
'''


def A(pattern):
    """`pattern` matched in the default graph and in the union of the named graphs (most of
    the N-Quads datasets keep everything in one named graph)."""
    return '{ { %s } UNION { GRAPH <urn:x-arq:UnionGraph> { %s } } }' % (pattern, pattern)


# Generic queries: every ORDER BY is total over what is projected (ties broken by the lexical
# form, language and datatype), so the answer text is the same whatever NodeIds a loader chose.
LIT_TIES = 'STR(?o) LANG(?o) STR(DATATYPE(?o))'
QUERIES = {
    'count-by-graph': '''
SELECT ?g (COUNT(*) AS ?n) WHERE {
  { ?s ?p ?o BIND("(default)" AS ?g) } UNION { GRAPH ?g { ?s ?p ?o } }
} GROUP BY ?g ORDER BY ?g''',
    'predicates': '''
SELECT ?p (COUNT(*) AS ?n) (COUNT(DISTINCT ?s) AS ?subjects) (COUNT(DISTINCT ?o) AS ?objects)
WHERE %s GROUP BY ?p ORDER BY DESC(?n) ?p''' % A('?s ?p ?o'),
    'classes': '''
SELECT ?c (COUNT(DISTINCT ?s) AS ?n) WHERE { %s FILTER(isIRI(?c)) }
GROUP BY ?c ORDER BY DESC(?n) ?c''' % A('?s a ?c'),
    'language-tags': '''
SELECT ?lang (COUNT(*) AS ?n) (COUNT(DISTINCT ?o) AS ?distinct) (MIN(STR(?o)) AS ?first) WHERE {
  %s FILTER(isLiteral(?o) && LANG(?o) != "") BIND(LANG(?o) AS ?lang)
} GROUP BY ?lang ORDER BY ?lang''' % A('?s ?p ?o'),
    'datatypes': '''
SELECT ?dt (COUNT(*) AS ?n) (COUNT(DISTINCT ?o) AS ?distinct) WHERE {
  %s FILTER(isLiteral(?o)) BIND(DATATYPE(?o) AS ?dt)
} GROUP BY ?dt ORDER BY ?dt''' % A('?s ?p ?o'),
    'literal-sizes': '''
SELECT (COUNT(*) AS ?n) (SUM(STRLEN(STR(?o))) AS ?chars) (MAX(STRLEN(STR(?o))) AS ?longest)
       (SUM(STRLEN(ENCODE_FOR_URI(STR(?o)))) AS ?encoded) WHERE { %s FILTER(isLiteral(?o)) }''' % A('?s ?p ?o'),
    'literals-ascending': '''
SELECT DISTINCT ?o WHERE { %s FILTER(isLiteral(?o)) } ORDER BY ?o %s LIMIT 300''' % (A('?s ?p ?o'), LIT_TIES),
    'literals-descending-typed': '''
SELECT DISTINCT ?o WHERE {
  %s FILTER(isLiteral(?o) && DATATYPE(?o) != xsd:string && DATATYPE(?o) != rdf:langString)
} ORDER BY DESC(?o) %s LIMIT 300''' % (A('?s ?p ?o'), LIT_TIES),
    'labels-ordered': '''
SELECT ?s ?l WHERE { %s FILTER(isIRI(?s)) } ORDER BY ?l LANG(?l) ?s OFFSET 50 LIMIT 400''' % A('?s rdfs:label ?l'),
    'english-text': '''
SELECT ?s ?o WHERE { %s FILTER(!isBlank(?s) && LANGMATCHES(LANG(?o), "en")) }
ORDER BY DESC(STRLEN(?o)) ?s ?o LIMIT 100''' % A('?s rdfs:comment|skos:definition|rdfs:label ?o'),
    'numeric-stats': '''
SELECT ?dt (COUNT(*) AS ?n) (COUNT(DISTINCT ?o) AS ?distinct) (MIN(?o) AS ?min) (MAX(?o) AS ?max) WHERE {
  %s FILTER(isNumeric(?o)) BIND(DATATYPE(?o) AS ?dt)
} GROUP BY ?dt ORDER BY ?dt''' % A('?s ?p ?o'),
    'numeric-filter': '''
SELECT ?s ?p ?o WHERE { %s FILTER(isNumeric(?o) && ?o > 0 && ?o <= 1000 && !isBlank(?s)) }
ORDER BY ?o ?p ?s %s LIMIT 300''' % (A('?s ?p ?o'), LIT_TIES),
    'numeric-rejoin': '''
SELECT ?o (COUNT(*) AS ?n) WHERE {
  { SELECT DISTINCT ?o WHERE { %s FILTER(isNumeric(?o)) } ORDER BY DESC(?o) %s LIMIT 40 }
  %s
} GROUP BY ?o ORDER BY ?o %s''' % (A('?x ?q ?o'), LIT_TIES, A('?s ?p ?o'), LIT_TIES),
    'temporal-stats': '''
SELECT ?dt (COUNT(*) AS ?n) (MIN(?o) AS ?min) (MAX(?o) AS ?max) WHERE {
  %s FILTER(isLiteral(?o) && DATATYPE(?o) IN (xsd:date, xsd:dateTime, xsd:dateTimeStamp, xsd:time,
                                              xsd:gYear, xsd:gYearMonth, xsd:duration))
  BIND(DATATYPE(?o) AS ?dt)
} GROUP BY ?dt ORDER BY ?dt''' % A('?s ?p ?o'),
    'date-filter': '''
SELECT ?s ?p ?o WHERE {
  %s FILTER(!isBlank(?s) && isLiteral(?o))
  FILTER((DATATYPE(?o) = xsd:date && ?o >= "2005-01-01"^^xsd:date)
      || (DATATYPE(?o) = xsd:dateTime && ?o >= "2005-01-01T00:00:00Z"^^xsd:dateTime)
      || (DATATYPE(?o) = xsd:gYear && ?o >= "2005"^^xsd:gYear))
} ORDER BY ?o ?s ?p %s LIMIT 300''' % (A('?s ?p ?o'), LIT_TIES),
    'language-rejoin': '''
SELECT ?o (COUNT(*) AS ?n) WHERE {
  { SELECT DISTINCT ?o WHERE { %s FILTER(LANG(?o) != "" && LANG(?o) != "en") } ORDER BY %s LIMIT 60 }
  %s
} GROUP BY ?o ORDER BY %s''' % (A('?x ?q ?o'), LIT_TIES, A('?s ?p ?o'), LIT_TIES),
    'owl-restrictions': '''
SELECT ?kind ?prop (COUNT(*) AS ?n) WHERE {
  %s FILTER(isBlank(?r) && isIRI(?prop) && ?kind NOT IN (rdf:type, owl:onProperty))
} GROUP BY ?kind ?prop ORDER BY ?kind ?prop''' % A('?r a owl:Restriction ; owl:onProperty ?prop ; ?kind ?v'),
    'restricted-classes': '''
SELECT ?cls ?prop ?val WHERE {
  %s FILTER(isIRI(?cls) && !isBlank(?val))
} ORDER BY ?cls ?prop ?val LIMIT 500''' % A(
        '?cls rdfs:subClassOf|owl:equivalentClass ?r . ?r owl:onProperty ?prop ; '
        'owl:someValuesFrom|owl:allValuesFrom|owl:hasValue|owl:onClass|owl:onDataRange ?val'),
    'lists': '''
SELECT ?p (COUNT(DISTINCT ?l) AS ?lists) (COUNT(?item) AS ?items) (COUNT(DISTINCT ?item) AS ?distinct) WHERE {
  %s FILTER(?p != rdf:rest)
} GROUP BY ?p ORDER BY ?p''' % A('?x ?p ?l . ?l rdf:first ?first . ?l rdf:rest*/rdf:first ?item'),
    'list-members': '''
SELECT ?owner ?p ?item WHERE { %s FILTER(!isBlank(?owner) && !isBlank(?item) && ?p != rdf:rest) }
ORDER BY ?owner ?p ?item LIMIT 400''' % A('?owner ?p ?l . ?l rdf:first ?first . ?l rdf:rest*/rdf:first ?item'),
    'union-members': '''
SELECT ?cls ?op ?member WHERE { %s FILTER(isIRI(?cls) && isIRI(?member)) }
ORDER BY ?cls ?op ?member LIMIT 400''' % A(
        '?cls (rdfs:subClassOf|owl:equivalentClass|rdfs:range|rdfs:domain|sh:or|sh:in)/'
        '((owl:unionOf|owl:intersectionOf|owl:oneOf)?) ?l . ?l rdf:rest*/rdf:first ?member . BIND("list" AS ?op)'),
    'blank-node-paths': '''
SELECT ?p1 ?p2 (COUNT(*) AS ?n) WHERE { %s FILTER(isBlank(?b)) }
GROUP BY ?p1 ?p2 ORDER BY ?p1 ?p2''' % A('?s ?p1 ?b . ?b ?p2 ?o'),
    'blank-node-counts': '''
SELECT ?subjects ?objects ?both WHERE {
  { SELECT (COUNT(DISTINCT ?b) AS ?subjects) WHERE { %s FILTER(isBlank(?b)) } }
  { SELECT (COUNT(DISTINCT ?b) AS ?objects) WHERE { %s FILTER(isBlank(?b)) } }
  { SELECT (COUNT(*) AS ?both) WHERE { %s FILTER(isBlank(?s) && isBlank(?o)) } }
}''' % (A('?b ?p ?o'), A('?s ?p ?b'), A('?s ?p ?o')),
    'shacl-property-shapes': '''
SELECT ?path ?k (COUNT(*) AS ?n) WHERE { %s FILTER(isIRI(?path)) }
GROUP BY ?path ?k ORDER BY ?path ?k LIMIT 500''' % A('?shape sh:property ?ps . ?ps sh:path ?path ; ?k ?v'),
    'unusual-iris': '''
SELECT DISTINCT ?i WHERE {
  { %s } UNION { %s }
  FILTER(isIRI(?i) && REGEX(STR(?i), "[^A-Za-z0-9:/#._~-]|^[^h]|%%|/$"))
} ORDER BY ?i LIMIT 300''' % (A('?i ?p ?o'), A('?s ?p ?i')),
    'longest-iris': '''
SELECT DISTINCT ?i (STRLEN(STR(?i)) AS ?len) WHERE { %s FILTER(isIRI(?i)) }
ORDER BY DESC(?len) ?i LIMIT 50''' % A('?i ?p ?o'),
}
QUERY_ITEMS = [(PREFIXES + q, 'tsv') for q in QUERIES.values()]


# ----------------------------------------------------------------------------- fetching
_unreachable = {}


def dataset_files(ds):
    """The dataset's local files; skip (CI unset) or fail (CI=true) when its registry is out of
    reach; one attempt per package and session."""
    key = ds['package']
    if key not in _unreachable:
        try:
            return realworld_fetch.dataset_files(MANIFEST, ds)
        except realworld_fetch.Unreachable as e:
            _unreachable[key] = str(e)
    pkg = MANIFEST['packages'][key]
    msg = 'cannot fetch %s %s %s for dataset %s: %s' % (pkg['registry'], pkg['name'], pkg['version'], ds['name'],
                                                        _unreachable[key])
    if IN_CI:
        pytest.fail(msg + ' (CI=true: downloads must work)')
    pytest.skip('registry unreachable (CI unset): ' + msg)


# ----------------------------------------------------------------------------- tdbloader references
class Verdict:
    def __init__(self, path, ok, stderr):
        self.path, self.ok, self.stderr = path, ok, stderr
        self.db = os.path.join(path, 'db')

    def dump(self):
        with open(os.path.join(self.path, 'dump.nq'), encoding='utf-8') as f:
            return f.read()


def tdbloader_ref(jena, files):
    """Jena's tdb2.tdbloader (default loader) on `files`, its verdict, DB and tdbdump, built once
    and kept under $RDF_BULKLOAD_CACHE/jena-refs/jena-5.6.0/tdbloader-<key>/."""
    h = hashlib.sha256(('tdbloader %s\n' % JENA_VERSION).encode())
    for f in files:
        h.update(('%s %s\n' % (os.path.abspath(f), sha256_file(f))).encode())
    final = os.path.join(jena.refs, 'tdbloader-' + h.hexdigest()[:24])
    with file_lock(final + '.lock'):
        if not os.path.exists(os.path.join(final, 'complete')):
            tmp = final + '.tmp'
            shutil.rmtree(tmp, ignore_errors=True)
            os.makedirs(tmp)
            t0 = time.time()
            r = jena.tdbloader(os.path.join(tmp, 'db'), files, timeout=3600, check=False)
            with contextlib.suppress(FileNotFoundError):
                os.remove(os.path.join(tmp, 'db', 'tdb.lock'))
            ok = r.returncode == 0
            if ok:
                with open(os.path.join(tmp, 'dump.nq'), 'w', encoding='utf-8') as f:
                    f.write(jena.tdbdump(os.path.join(tmp, 'db')))
            with open(os.path.join(tmp, 'verdict.json'), 'w') as f:
                json.dump({'jena': JENA_VERSION, 'files': [os.path.abspath(x) for x in files], 'ok': ok,
                           'exit': r.returncode, 'stderr': r.stderr[-4000:],
                           'seconds': round(time.time() - t0, 1)}, f)
            open(os.path.join(tmp, 'complete'), 'w').close()
            shutil.rmtree(final, ignore_errors=True)
            os.rename(tmp, final)
    with open(os.path.join(final, 'verdict.json')) as f:
        v = json.load(f)
    return Verdict(final, v['ok'], v['stderr'])


def xloader_verdict(jena, files, tmp):
    """Only where tdbloader refused: does xloader refuse too? (not cached: never expected)."""
    r = jena.xloader(os.path.join(tmp, 'xdb'), os.path.join(tmp, 'xwork'), files, timeout=3600, check=False)
    return r.returncode == 0, r.stderr[-2000:]


# ----------------------------------------------------------------------------- our load, once per dataset
class Pair:
    def __init__(self, ds, files, load, tdbl, built):
        self.ds, self.files, self.load, self.tdbl, self.built = ds, files, load, tdbl, built
        self.dumps = {}


_pairs = {}


def pair(ds, loader, jena, tmp_path_factory):
    if ds['name'] in _pairs:
        return _pairs[ds['name']]
    files = dataset_files(ds)
    tdbl = tdbloader_ref(jena, files)
    db = tmp_path_factory.mktemp('realworld-' + ds['name']) / 'db'
    load = loader.load(db, files, expect=None)
    built = None
    if tdbl.ok and load.returncode == EXIT_OK:
        built = Built(jena, files, str(db), jena.xloader_ref(files), jena.marker_ref(files), load)
    p = _pairs[ds['name']] = Pair(ds, files, load, tdbl, built)
    return p


class DumpOnce:
    """Jena with tdbdump of each database run once per session (check_pair dumps ours)."""

    def __init__(self, jena, dumps):
        self._jena, self._dumps = jena, dumps

    def tdbdump(self, db):
        if db not in self._dumps:
            self._dumps[db] = self._jena.tdbdump(db)
        return self._dumps[db]


def ids(ds):
    return ds['name']


# ----------------------------------------------------------------------------- the tests
def test_manifest_is_complete():
    """Every dataset names files with digests; together they cover the kinds this suite claims."""
    assert 8 <= len(DATASETS), len(DATASETS)
    registries = {MANIFEST['packages'][d['package']]['registry'] for d in DATASETS}
    assert registries == {'npm', 'pypi', 'maven'}, registries
    for d in DATASETS:
        for member, digest in d['files']:
            assert len(digest) == 64 and int(digest, 16) >= 0, (d['name'], member)
        for q in d.get('empty', []):
            assert q in QUERIES, '%s: unknown query %s in empty' % (d['name'], q)
    exts = {os.path.splitext(m)[1] for d in DATASETS for m, _ in d['files']}
    assert {'.nq', '.ttl', '.rdf'} <= exts, exts


@pytest.mark.parametrize('ds', DATASETS, ids=ids)
def test_realworld_loads_like_jena(ds, loader, jena, tmp_path_factory, tmp_path):
    """Same verdict as tdbloader and xloader; xloader's records (or isomorphism); tdbloader's dump."""
    p = pair(ds, loader, jena, tmp_path_factory)
    if not p.tdbl.ok:
        x_ok, x_err = xloader_verdict(jena, p.files, str(tmp_path))
        assert not x_ok, 'tdbloader refused %s but xloader accepted it:\n%s' % (ds['name'], p.tdbl.stderr)
        assert p.load.returncode == EXIT_BAD_INPUT, 'Jena refuses %s (tdbloader: %s) but we exit %d:\n%r' % (
            ds['name'], p.tdbl.stderr[-1500:], p.load.returncode, p.load)
        return
    assert p.load.returncode == EXIT_OK, 'Jena loads %s, we refuse it:\n%r' % (ds['name'], p.load)
    j = DumpOnce(jena, p.dumps)
    test_differential.check_pair(p.built, j)
    ours = j.tdbdump(p.built.db)
    if '_:' not in ours:
        assert_same_dump(p.tdbl.dump(), ours, what='%s vs tdbloader' % ds['name'])
    else:
        # check_pair proved ours isomorphic to what xloader means; that tdbloader's dump is
        # isomorphic to the same (Jena against Jena) is proved once and remembered beside it.
        b = p.built
        expected = b.ref.dump() if b.marker is None else marker_dump_to_default(b.marker.dump())
        mark = os.path.join(p.tdbl.path, 'isomorphic-to-' + os.path.basename((b.marker or b.ref).path))
        if not os.path.exists(mark):
            assert_same_dump(expected, p.tdbl.dump(), what='%s: tdbloader vs xloader (Jena vs Jena)' % ds['name'])
            open(mark, 'w').close()
        assert len(dump_quads(ours)) == len(dump_quads(p.tdbl.dump())), ds['name']
    least = ds.get('min_dump_lines', 100)
    assert ours.count('\n') >= least, 'suspiciously small dump for %s (under %d lines)' % (ds['name'], least)


@pytest.mark.parametrize('ds', DATASETS, ids=ids)
def test_realworld_sparql_like_jena(ds, loader, jena, tmp_path_factory):
    """The same tdbquery answers on ours, xloader's and tdbloader's databases."""
    p = pair(ds, loader, jena, tmp_path_factory)
    if not p.tdbl.ok or p.load.returncode != EXIT_OK:
        pytest.skip('%s: not loaded (the verdict is test_realworld_loads_like_jena\'s)' % ds['name'])
    ours = jena.tdbquery_many(p.built.db, QUERY_ITEMS)
    xl = p.built.qref.tdbquery_many(QUERY_ITEMS)
    tl = Reference(jena, p.tdbl.path).tdbquery_many(QUERY_ITEMS)
    allowed_empty = set(ds.get('empty', []))
    bad = []
    for name, a, x, t in zip(QUERIES, ours, xl, tl):
        rows = [l for l in x.split('\n')[1:] if l.strip()]
        if x != t:
            bad.append('%s: xloader and tdbloader disagree (a Jena difference, not ours):\n%s' % (name, _first_diff(x, t)))
        if a != x:
            bad.append('%s: ours differs from xloader\'s:\n%s' % (name, _first_diff(x, a)))
        elif a != t:
            bad.append('%s: ours differs from tdbloader\'s:\n%s' % (name, _first_diff(t, a)))
        if not rows and name not in allowed_empty:
            bad.append('%s: empty on Jena\'s databases (list it under `empty` of %s only if the data has nothing for it)'
                       % (name, ds['name']))
        if rows and name in allowed_empty:
            bad.append('%s: listed as empty for %s but answers %d rows' % (name, ds['name'], len(rows)))
    assert not bad, '\n'.join(bad)


def _first_diff(expected, actual):
    e, a = expected.split('\n'), actual.split('\n')
    for i in range(max(len(e), len(a))):
        x = e[i] if i < len(e) else '<none>'
        y = a[i] if i < len(a) else '<none>'
        if x != y:
            return '  line %d: Jena   %s\n  line %d: actual %s\n  (%d vs %d lines)' % (i, x[:300], i, y[:300], len(e), len(a))
    return '  (same lines?)'

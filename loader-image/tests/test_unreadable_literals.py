"""Literals Jena 5.6.0 cannot read back are bad input (issue 14, item 4).

A few lexical forms pass Jena's XSD checker and then make Jena's own value parser throw
(tdb2-nodeid's `jena_readable` lists the classes; `tests/jena_readable.rs` checks them against
Jena literal by literal). Jena's loaders abort on them; a database holding one fails every query
touching it. Here, end to end:

* strict mode: exit 3 with `FILE:LINE:COLUMN: <datatype> lexical form Jena 5.6.0 cannot read
  back: <reason>`, N-Triples and Turtle, nothing left at --loc;
* skip mode: exactly the unreadable statements are in the rejects file (position, reason,
  text), everything else is loaded, ill-formed literals Jena reads back included, and Jena
  (tdbquery and Fuseki over HTTP) answers a query that touches every literal (value, STR,
  equality, ORDER BY) without an error;
* Jena's own tdb2.tdbloader aborts on such a literal (what docs/loader.md says Jena does).
"""
import json
import os
import re

from conftest import EXIT_BAD_INPUT

EX = 'http://example.org/unreadable/'
XSD = 'http://www.w3.org/2001/XMLSchema#'
RDF = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#'
DEEP_XML = '<a>' * 20000 + '</a>' * 20000  # Jena's tdbloader overflows its stack at 10000
SHALLOW_XML = '<a>' * 500 + 'x' + '</a>' * 500

# (lexical form, datatype IRI, datatype as the message names it)
UNREADABLE = [
    ('2000-01-01T00:00:00.12345678901Z', XSD + 'dateTime', 'xsd:dateTime'),
    ('2000-01-01T00:00:00.2147483648+01:00', XSD + 'dateTimeStamp', 'xsd:dateTimeStamp'),
    ('12:00:00.99999999999', XSD + 'time', 'xsd:time'),
    ('PT.5S', XSD + 'duration', 'xsd:duration'),
    ('PT2147483648S', XSD + 'duration', 'xsd:duration'),
    ('-P1DT1.12345678901S', XSD + 'duration', 'xsd:duration'),
    (DEEP_XML, RDF + 'XMLLiteral', 'rdf:XMLLiteral'),
]
# Edge cases Jena reads back: well-formed, or ill-formed (stored and read as such).
READABLE = [
    ('abc', XSD + 'integer'),                                  # ill-formed
    ('2000-13-01T00:00:00.12345678901Z', XSD + 'dateTime'),   # ill-formed (month 13)
    ('P2147483648Y', XSD + 'duration'),                        # ill-formed (Xerces: int years)
    ('<a>', RDF + 'XMLLiteral'),                               # ill-formed XML
    ('2000-01-01T00:00:00.1234567890Z', XSD + 'dateTime'),
    ('2000-01-01T00:00:00.21474836470000Z', XSD + 'dateTime'),
    ('12:00:00.2147483647', XSD + 'time'),
    ('PT1.12345678901S', XSD + 'dayTimeDuration'),
    ('PT2147483647.5S', XSD + 'duration'),
    ('0000-01-01', XSD + 'date'),
    ('-2147483648', XSD + 'gYear'),
    ('1e99999', XSD + 'double'),
    ('123456789012345678901234567890.5', XSD + 'decimal'),
    ('0FB7', XSD + 'hexBinary'),
    (SHALLOW_XML, RDF + 'XMLLiteral'),
]
MESSAGE = r'(\S+) lexical form Jena 5\.6\.0 cannot read back: \S'


def nt_literal(lex, dt):
    return '"%s"^^<%s>' % (lex.replace('\\', '\\\\').replace('"', '\\"'), dt)


def nt_lines(cases, tag):
    return ['<%s%s%d> <%sp> %s .' % (EX, tag, i, EX, nt_literal(lex, dt)) for i, (lex, dt, *_) in enumerate(cases)]


def test_strict_ntriples_names_file_line_column(loader, tmp_path):
    for i, (lex, dt, name) in enumerate(UNREADABLE):
        lines = nt_lines(READABLE[:3], 'ok') + nt_lines([(lex, dt)], 'bad') + nt_lines(READABLE[3:5], 'ok2')
        src = tmp_path / ('in%d.nt' % i)
        src.write_text('\n'.join(lines) + '\n', encoding='utf-8')
        db = tmp_path / ('db%d' % i)
        r = loader.load(db, [src], expect=EXIT_BAD_INPUT)
        column = lines[3].index('"') + 1
        m = re.search(re.escape('%s:4:%d: ' % (src, column)) + MESSAGE, r.stderr)
        assert m, 'no "%s:4:%d: %s lexical form ..." for %r on stderr:\n%s' % (src, column, name, lex[:40], r.stderr[-2000:])
        assert m.group(1) == name, m.group(0)
        assert not os.path.exists(db)


def test_strict_turtle_names_the_literals_line(loader, tmp_path):
    src = tmp_path / 'in.ttl'
    src.write_text('@prefix ex: <%s> .\n@prefix xsd: <%s> .\n\nex:a ex:p 1 ;\n    ex:q "ok" ,\n'
                   '        "PT.5S"^^xsd:duration ;\n    ex:r 2 .\n' % (EX, XSD), encoding='utf-8')
    db = tmp_path / 'db'
    r = loader.load(db, [src], expect=EXIT_BAD_INPUT)
    m = re.search(re.escape(str(src)) + r':6:9: ' + MESSAGE, r.stderr)
    assert m and m.group(1) == 'xsd:duration', r.stderr[-2000:]
    assert not os.path.exists(db)


def test_skip_rejects_exactly_the_unreadable_and_jena_answers_over_the_rest(loader, jena, fuseki, tmp_path):
    # N-Triples: readable and unreadable interleaved.
    nt, expect_rejects = [], []
    for i, (lex, dt) in enumerate(READABLE):
        nt.append(nt_lines([(lex, dt)], 'nt-ok%d-' % i)[0])
        if i < len(UNREADABLE):
            lex_u, dt_u, name = UNREADABLE[i]
            line = nt_lines([(lex_u, dt_u)], 'nt-bad%d-' % i)[0]
            nt.append(line)
            expect_rejects.append(('in.nt', len(nt), line.index('"') + 1, name))
    src_nt = tmp_path / 'in.nt'
    src_nt.write_text('\n'.join(nt) + '\n', encoding='utf-8')
    # Turtle: the same literals as objects of a predicate-object list, one per line.
    ttl = ['@prefix ex: <%s> .' % EX, 'ex:t ex:p']
    for i, (lex, dt) in enumerate(READABLE):
        ttl.append('    %s ,' % nt_literal(lex, dt))
        if i < len(UNREADABLE):
            lex_u, dt_u, name = UNREADABLE[i]
            ttl.append('    %s ,' % nt_literal(lex_u, dt_u))
            expect_rejects.append(('in.ttl', len(ttl), 5, name))
    ttl.append('    "last" .')
    src_ttl = tmp_path / 'in.ttl'
    src_ttl.write_text('\n'.join(ttl) + '\n', encoding='utf-8')

    db = tmp_path / 'db'
    rejects = tmp_path / 'rejects.jsonl'
    loader.load(db, [src_nt, src_ttl], '--on-error', 'skip', '--rejects', rejects)
    got = [json.loads(l) for l in rejects.read_text(encoding='utf-8').splitlines()]
    assert [(os.path.basename(r['file']), r['line'], r['column'], re.match(MESSAGE, r['reason']).group(1)) for r in got] \
        == expect_rejects, json.dumps(got, indent=1)[:4000]
    for r in got:
        assert r['text'] in (nt + ttl), r
    with open(os.path.join(db, 'bulkload-report.json'), encoding='utf-8') as f:
        report = json.load(f)
    assert report['rejects'] == len(UNREADABLE) * 2, report

    # Every literal loaded, touched by Jena: value (FILTER, =), STR, DATATYPE and ORDER BY.
    query = ('SELECT ?s ?o (STR(?o) AS ?str) (DATATYPE(?o) AS ?dt) (?o = ?o AS ?same) '
             '(IF(?o < ?o, 1, 0) AS ?lt) WHERE { ?s ?p ?o FILTER(?o = ?o || true) } ORDER BY ?o ?s')
    want_rows = len(READABLE) * 2 + 1
    r = jena.cmd('tdb2.tdbquery', '--loc', str(db), '--results', 'json', query, check=False)
    assert r.returncode == 0 and 'Exception' not in r.stderr, r.stderr[-4000:]
    rows = json.loads(r.stdout)['results']['bindings']
    assert len(rows) == want_rows, (len(rows), r.stdout[:2000])
    assert all('str' in b for b in rows), [b for b in rows if 'str' not in b][:3]
    server = fuseki(str(db))
    answer = json.loads(server.query(query))  # asserts HTTP 200
    assert len(answer['results']['bindings']) == want_rows
    server.stop()


def test_jena_tdbloader_aborts_on_such_a_literal(jena, tmp_path):
    """What docs/loader.md says of Jena's own loaders: they cannot load it either."""
    src = tmp_path / 'one.nt'
    src.write_text(nt_lines([UNREADABLE[0][:2]], 'bad')[0] + '\n', encoding='utf-8')
    r = jena.cmd('tdb2.tdbloader', '--loc', str(tmp_path / 'jdb'), str(src), check=False)
    assert r.returncode != 0 or 'NumberFormatException' in r.stderr + r.stdout, (r.returncode, r.stderr[-2000:])

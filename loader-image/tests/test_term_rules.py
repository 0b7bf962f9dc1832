"""Language tags and IRIs as Jena 5.6.0 judges them (docs/fidelity.md), differentially:
generated tags and IRIs, one statement per line, each line parsed alone by Jena's own parser
(jena/ParseLines.java, the settings its loaders use) and the whole file loaded by us in skip
mode, as N-Triples and as Turtle (the same lines: the line and the statement paths, fast and
full parser, escapes included).

* a line Jena refuses, we refuse;
* a line Jena keeps, we keep with exactly the terms Jena holds (tdbdump of our database prints
  Jena's line: language tags in Jena's case, IRIs as written) -- except an IRI holding a
  character the IRIREF grammar forbids (raw or escaped: space, controls, <>"{}|^`\\), which
  Jena keeps with a warning and the W3C syntax tests refuse (turtle-syntax-bad-uri-escape-*):
  we refuse it;
* our report counts a `language-tag-not-bcp47` warning exactly where Jena's Turtle parser says
  "Language not valid", and an `iri-not-rfc3987` warning only where Jena says "Bad IRI".
"""
import json
import os
import random

import pytest

from conftest import TESTS, build_pair, run
from test_differential import check_pair

SEED = 20261128
S = 'http://ex.org/s%d'
P = 'http://ex.org/p'
KNOWN_TAGS = ['en', 'EN-gb', 'zh-classical', 'zh-Hant-TW', 'x-AB', 'X-abc-DE', 'x-AB-abcdefghi', 'i-klingon',
              'sgn-be-fr', 'en-GB-oed', 'zh-yue-HK', 'de-CH-1996', 'en-a-bb-x-cc', 'abcdefghi', 'en-a', 'a',
              'ABCDEFGHI-ab-ABCD', 'en-US-u-islamcal', 'be-tarask', 'de-1901-1901', 'en-Latn-GB-boont-r-extended-sequence-x-private']
KNOWN_IRIS = ['http://ex.org/100%', 'http://ex.org/a%zz', 'http://ex.org/a%2', 'http://ex.org/a#b#c',
              'http://ex.org:port/x', 'http://[::1/x', 'http://ex.org/a]b', 'urn:isbn:123', 'http://ex.org/\u00e9',
              'http://ex.org/\ue000', 'http://ex.org/q?\ue000', 'http://ex.org/{x}', 'http://ex.org/a|b',
              'mailto:a@b', 'http://ex.org/a b', 'http://ex.org/%E2%82%AC', 'x1+.-:y', 'http://ex.org/\u007f',
              'http://ex.org/a/./b/../c']
FORBIDDEN = set('<>"{}|^`\\') | {chr(c) for c in range(0x21)}


def gen_tag(r):
    if r.random() < 0.1:
        return r.choice(['1en', 'en_GB', 'en-', 'en--x', '-en', 'é'])  # the grammar refuses these
    first = ''.join(r.choice('abcdefghijklmnopqrstuvwxyzABCDEFXYZ') for _ in range(r.choice([1, 2, 2, 3, 4, 5, 8, 9])))
    parts = [first]
    for _ in range(r.choice([0, 1, 1, 2, 3, 4])):
        n = r.choice([1, 2, 2, 3, 4, 4, 5, 8, 9, 10])
        parts.append(''.join(r.choice('abcdeflmnxyzABCDGHXZ0123456789') for _ in range(n)))
    return '-'.join(parts)


IRI_CHARS = list('abcxyzAZ09-._~!$&\'()*+,;=:@/?#%[]') + ['%41', '%zz', '%2', '\u00e9', '\u4e2d', '\ue000', '\ufffd', '{', '|', '^', ' ']


def gen_iri(r):
    start = r.choice(['http://ex.org/', 'https://h.ex:8080/', 'http://h.ex:xx/', 'urn:x:', 'mailto:', 'http://[::1]/',
                      'http://', 'x+y:'])
    return start + ''.join(r.choice(IRI_CHARS) for _ in range(r.randint(0, 10)))


def iriref(iri, r):
    """An IRIREF for `iri`, some characters as \\u escapes (the full parser's path)."""
    out = []
    for c in iri:
        if c in '<>"\\\n\r' or (c in 'a%' and r.random() < 0.3):
            out.append('\\u%04X' % ord(c))
        else:
            out.append(c)
    return '<' + ''.join(out) + '>'


def cases():
    r = random.Random(SEED)
    items = [('tag', t) for t in KNOWN_TAGS] + [('iri', i) for i in KNOWN_IRIS]
    items += [('tag', gen_tag(r)) for _ in range(500)] + [('iri', gen_iri(r)) for _ in range(500)]
    lines = []
    for n, (kind, term) in enumerate(items):
        if kind == 'tag':
            lex = r.choice(['"v"', '"v\\"w"', "'v'"])
            obj = '%s@%s' % (lex, term)
        else:
            obj = iriref(term, r) if r.random() < 0.7 else '"7"^^' + iriref(term, r)
        lines.append('<%s> <%s> %s .' % (S % n, P, obj))
    return items, lines


@pytest.fixture(scope='module')
def generated(tmp_path_factory, jena):
    d = tmp_path_factory.mktemp('term-rules')
    items, lines = cases()
    # N-Triples has no single-quoted strings: those lines are Turtle only.
    nt_lines = [l if "'v'" not in l else l.replace("'v'", '"v"') for l in lines]
    files = {'nt': d / 'terms.nt', 'ttl': d / 'terms.ttl'}
    files['nt'].write_text('\n'.join(nt_lines) + '\n', encoding='utf-8')
    files['ttl'].write_text('\n'.join(lines) + '\n', encoding='utf-8')
    verdicts = {}
    for syntax, lang in (('nt', 'N-Triples'), ('ttl', 'Turtle')):
        out = d / ('jena-%s.tsv' % syntax)
        p = run(['java', '-cp', os.path.join(jena.home, 'lib', '*'), os.path.join(TESTS, 'jena', 'ParseLines.java'),
                 lang, str(files[syntax]), str(out)], timeout=600)
        assert p.returncode == 0, 'ParseLines failed:\n' + p.stderr[-3000:]
        rows = [l.split('\t') for l in out.read_text(encoding='utf-8').split('\n') if l]
        assert len(rows) == len(items)
        verdicts[syntax] = rows
    return d, items, files, verdicts


def forbidden(iri):
    return any(c in FORBIDDEN for c in iri)


def dot_segments(iri):
    """A path segment `.` or `..`: Jena removes them from an IRI it finds valid (RFC 3986
    §5.2.4, also in N-Triples); the loader keeps the IRI as written (a difference noticed
    here, not yet closed: docs/fidelity.md)."""
    path = iri.split('#')[0].split('?')[0]
    return any(seg in ('.', '..') for seg in path.split('/')[3:])


@pytest.mark.parametrize('syntax', ['nt', 'ttl'])
def test_generated_tags_and_iris_as_jena_keeps_them(syntax, generated, loader, jena):
    d, items, files, verdicts = generated
    db = d / ('db-' + syntax)
    rejects_path = d / ('rejects-' + syntax + '.jsonl')
    report_path = d / ('report-' + syntax + '.json')
    loader.load(db, ['--on-error', 'skip', '--max-rejects', '100000', '--rejects', rejects_path,
                     '--report', report_path, files[syntax]])
    rejected = {json.loads(l)['line'] for l in rejects_path.read_text(encoding='utf-8').split('\n') if l.strip()}
    ours = {}
    for line in jena.tdbdump(str(db)).split('\n'):
        if line.startswith('<http://ex.org/s'):
            ours[int(line[len('<http://ex.org/s'):line.index('>')])] = line
    counts = {'jena refuses': 0, 'grammar refuses, jena keeps': 0, 'kept': 0, 'kept with a warning': 0}
    both_keep = []
    lang_warned, iri_warned = 0, 0
    problems = []
    for n, ((kind, term), row) in enumerate(zip(items, verdicts[syntax])):
        line_no = n + 1
        ttl_row = verdicts['ttl'][n]
        if row[0] == 'error':
            counts['jena refuses'] += 1
            if line_no not in rejected:
                problems.append('line %d: Jena refuses (%s), we keep %r' % (line_no, row[1], ours.get(n)))
            continue
        if kind == 'iri' and forbidden(term):
            counts['grammar refuses, jena keeps'] += 1
            if line_no not in rejected:
                problems.append('line %d: %r holds a character IRIREF forbids; we keep it' % (line_no, term))
            continue
        if line_no in rejected or n not in ours:
            problems.append('line %d: Jena keeps %s; we reject it' % (line_no, row[2]))
            continue
        if kind == 'iri' and dot_segments(term) and ours[n] != row[2].strip():
            counts['dot segments'] = counts.get('dot segments', 0) + 1
            if ('<%s>' % term) not in ours[n] or ('<%s>' % term) in row[2]:
                problems.append('line %d: dot segments: we should hold the IRI as written, Jena without them:\n'
                                '   Jena %s\n   ours %s' % (line_no, row[2], ours[n]))
            continue
        both_keep.append(line_no)
        if ours[n] != row[2].strip():
            problems.append('line %d: Jena holds %s\n   we hold %s' % (line_no, row[2], ours[n]))
        warned = ttl_row[0] == 'ok' and ttl_row[1] != ''
        counts['kept with a warning' if warned else 'kept'] += 1
        lang_warned += kind == 'tag' and 'Language not valid' in ttl_row[1]
        iri_warned += kind == 'iri' and 'Bad IRI' in ttl_row[1]
    assert not problems, '%d differences from Jena:\n%s' % (len(problems), '\n'.join(problems[:40]))
    assert all(counts.values()), counts          # every kind of line occurred
    report = json.loads(report_path.read_text(encoding='utf-8'))
    assert report['warnings'].get('language-tag-not-bcp47', 0) == lang_warned, (report['warnings'], lang_warned)
    assert 0 < report['warnings'].get('iri-not-rfc3987', 0) <= iri_warned, (report['warnings'], iri_warned)
    examples = report['warning_examples']
    assert examples and all(e['file'] == str(files[syntax]) and e['line'] >= 1 and e['column'] >= 1 for e in examples)
    for e in examples:
        written = files[syntax].read_text(encoding='utf-8').split('\n')[e['line'] - 1]
        at = written[e['column'] - 1:]
        if e['kind'] == 'language-tag-not-bcp47':
            assert at.startswith('@' + e['term']), (e, written)
        else:
            assert at.startswith('<') or at.startswith('"'), (e, written)


@pytest.mark.parametrize('syntax', ['nt', 'ttl'])
def test_what_both_keep_is_record_identical_to_xloader(syntax, generated, loader, jena, tmp_path):
    """The lines Jena and we both keep, loaded by tdb2.xloader and by us (strict): the same
    node table (entries and keys: language tags in Jena's case, IRIs as written) and indexes."""
    d, items, files, verdicts = generated
    written = files[syntax].read_text(encoding='utf-8').split('\n')
    keep = [written[n] for n, ((kind, term), row) in enumerate(zip(items, verdicts[syntax]))
            if row[0] == 'ok' and not (kind == 'iri' and (forbidden(term) or dot_segments(term)))]
    assert len(keep) > 500
    src = tmp_path / ('kept.' + syntax)
    src.write_text('\n'.join(keep) + '\n', encoding='utf-8')
    check_pair(build_pair(loader, jena, [str(src)], tmp_path / 'db'), jena)

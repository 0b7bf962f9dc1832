"""N-Triples / N-Quads reading and an isomorphism-aware comparison (for tdbdump output).

Terms are tuples ('iri', s) | ('bnode', label) | ('lit', lex, lang, datatype); a quad is
(g, s, p, o) with g None for the default graph.

`canonical(quads)` relabels blank nodes deterministically (colour refinement, then
individualisation with the lexicographically smallest result), so two datasets are
isomorphic iff their canonical forms are equal. `normalise_term` maps literals to the form
Jena's TDB2 round-trip keeps: xsd:string -> simple literal, lowercase language tags (they are
case-insensitive in RDF), and value-equal forms for the datatypes TDB2 stores inline
(so "1E0"^^xsd:double and Jena's printed "1.0e0" compare equal, but "1.50" and "1.5"
decimals stay different, as in TDB2).
"""
import decimal
import gzip
import hashlib
import re

XSD = 'http://www.w3.org/2001/XMLSchema#'
DEFAULT_GRAPHS = ('urn:x-arq:DefaultGraph', 'urn:x-arq:DefaultGraphNode')

_ECHAR = {'t': '\t', 'b': '\b', 'n': '\n', 'r': '\r', 'f': '\f', '"': '"', "'": "'", '\\': '\\'}
_ESC = re.compile(r'\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))', re.S)


def unescape(s):
    def rep(m):
        if m.group(1):
            return chr(int(m.group(1), 16))
        if m.group(2):
            return chr(int(m.group(2), 16))
        return _ECHAR[m.group(3)]
    return _ESC.sub(rep, s) if '\\' in s else s


_TOKEN = re.compile(r'''[ \t]*(?:
    <((?:[^>\\]|\\.)*)>                                  # 1 IRI
  | _:([^\s<>"]+?)(?=[ \t]*[\s<"_.]|$)                  # 2 blank node
  | "((?:[^"\\]|\\.)*)"(?:@([A-Za-z0-9\-]+)|\^\^<((?:[^>\\]|\\.)*)>)?   # 3 lex 4 lang 5 dt
  | (\.)[ \t]*(?:\#.*)?$                                # 6 end
)''', re.X)


class ParseError(ValueError):
    pass


_TT_OPEN = re.compile(r'[ \t]*<<\([ \t]*')
_TT_CLOSE = re.compile(r'[ \t]*\)>>')


def _term_at(line, pos, where):
    """One term at pos -> (term, end) | (None, end) at the final '.'. RDF 1.2 triple terms
    `<<( s p o )>>` become ('triple', s, p, o); a base direction stays in the language tag
    ("x"@en--ltr has lang 'en--ltr')."""
    m = _TT_OPEN.match(line, pos)
    if m:
        parts, pos = [], m.end()
        for _ in range(3):
            t, pos = _term_at(line, pos, where)
            if t is None:
                raise ParseError('%s: unterminated triple term' % where)
            parts.append(t)
        m = _TT_CLOSE.match(line, pos)
        if not m:
            raise ParseError('%s: no )>> at %r' % (where, line[pos:pos + 60]))
        return ('triple',) + tuple(parts), m.end()
    m = _TOKEN.match(line, pos)
    if not m:
        raise ParseError('%s: cannot parse at %r' % (where, line[pos:pos + 60]))
    if m.group(6):
        return None, m.end()
    if m.group(1) is not None:
        return ('iri', unescape(m.group(1))), m.end()
    if m.group(2) is not None:
        return ('bnode', m.group(2)), m.end()
    lang, dt = m.group(4), m.group(5)
    return ('lit', unescape(m.group(3)), lang, None if dt is None else unescape(dt)), m.end()


def parse_line(line, where=''):
    """One N-Triples/N-Quads statement -> quad, or None for blank/comment lines."""
    line = line.strip(' \t\r\n')
    if not line or line.startswith('#'):
        return None
    terms, pos = [], 0
    while True:
        t, pos = _term_at(line, pos, where)
        if t is None:
            break
        terms.append(t)
    if len(terms) == 3:
        return (None,) + tuple(terms)
    if len(terms) == 4:
        g = terms[3]
        if g[0] == 'iri' and g[1] in DEFAULT_GRAPHS:
            g = None
        return (g,) + tuple(terms[:3])
    raise ParseError('%s: %d terms' % (where, len(terms)))


def read_quads(path_or_text, is_text=False):
    # split on LF only: str.splitlines() also splits on \x1c-\x1e, \x85, \u2028... which are
    # legal raw characters inside N-Triples literals (and Jena prints them raw)
    if is_text:
        lines = path_or_text.split('\n')
        name = '<text>'
    else:
        opener = gzip.open if path_or_text.endswith('.gz') else open
        with opener(path_or_text, 'rt', encoding='utf-8') as f:
            lines = f.read().split('\n')
        name = path_or_text
    out = []
    for i, line in enumerate(lines, 1):
        q = parse_line(line, '%s:%d' % (name, i))
        if q is not None:
            out.append(q)
    return out


# ----------------------------------------------------------------------------- normalisation
_INT_TYPES = {'integer', 'positiveInteger', 'negativeInteger', 'nonNegativeInteger', 'nonPositiveInteger',
              'long', 'int', 'short', 'byte', 'unsignedLong', 'unsignedInt', 'unsignedShort', 'unsignedByte'}
_WS = ' \t\r\n'


def _value_key(name, s):
    """A value key for lexical form s of xsd:<name>, or None if not a valid/handled value."""
    s = s.strip(_WS)
    try:
        if name in _INT_TYPES:
            if re.fullmatch(r'[+-]?[0-9]+', s):
                return ('int', int(s))
        elif name == 'decimal':
            m = re.fullmatch(r'([+-]?)([0-9]*)(?:\.([0-9]*))?', s)
            if m and (m.group(2) or m.group(3)):
                d = decimal.Decimal(s).normalize()
                return ('dec', str(d if d != 0 else decimal.Decimal(0)))
        elif name in ('double', 'float'):
            if re.fullmatch(r'[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([Ee][+-]?[0-9]+)?|[+-]?INF|NaN', s):
                v = float(s.replace('INF', 'inf'))
                if name == 'float':
                    import struct
                    v = struct.unpack('>f', struct.pack('>f', v))[0] if abs(v) < 3.5e38 else v
                return ('dbl', 'nan' if v != v else repr(v))
        elif name == 'boolean':
            if s in ('true', '1', 'false', '0'):
                return ('bool', s in ('true', '1'))
    except (ValueError, OverflowError, decimal.InvalidOperation):
        return None
    return None


def normalise_term(t):
    if t is not None and t[0] == 'triple':
        return ('triple',) + tuple(normalise_term(x) for x in t[1:])
    if t is None or t[0] != 'lit':
        return t
    _, lex, lang, dt = t
    if lang:
        return ('lit', lex, lang.lower(), None)
    if dt == XSD + 'string':
        dt = None
    if dt and dt.startswith(XSD):
        k = _value_key(dt[len(XSD):], lex)
        if k is not None:
            return ('val', dt) + k
    return ('lit', lex, None, dt)


def normalise(quads):
    return {tuple(normalise_term(x) for x in q) for q in quads}


# ----------------------------------------------------------------------------- canonical bnodes
def _h(*parts):
    return hashlib.sha256(repr(parts).encode('utf-8')).hexdigest()[:32]


def canonical(quads):
    """Return a frozenset of quads with blank nodes relabelled canonically ('bnode', 'c<hash>')."""
    quads = set(quads)
    bnodes = sorted({t[1] for q in quads for t in q if t is not None and t[0] == 'bnode'})
    if not bnodes:
        return frozenset(quads)
    occ = {b: [] for b in bnodes}
    for q in quads:
        for pos, t in enumerate(q):
            if t is not None and t[0] == 'bnode':
                occ[t[1]].append((pos, q))

    def refine(colour):
        while True:
            new = {}
            for b in bnodes:
                sig = []
                for pos, q in occ[b]:
                    sig.append((pos, tuple(
                        ('B', colour[t[1]]) if (t is not None and t[0] == 'bnode') else t for t in q)))
                new[b] = _h(colour[b], sorted(sig, key=repr))
            if len(set(new.values())) == len(set(colour.values())):
                return new
            colour = new

    def label(colour):
        return frozenset(tuple(('bnode', 'c' + colour[t[1]]) if (t is not None and t[0] == 'bnode') else t
                               for t in q) for q in quads)

    def search(colour, depth=0):
        colour = refine(colour)
        groups = {}
        for b in bnodes:
            groups.setdefault(colour[b], []).append(b)
        ties = sorted((c for c, m in groups.items() if len(m) > 1), key=lambda c: (len(groups[c]), c))
        if not ties:
            return label(colour)
        best = None
        for b in groups[ties[0]]:
            c2 = dict(colour)
            c2[b] = _h(colour[b], 'individualised', depth)
            cand = search(c2, depth + 1)
            key = sorted(map(repr, cand))
            if best is None or key < best[0]:
                best = (key, cand)
        return best[1]

    return search({b: '0' for b in bnodes})


def diff(expected, actual, limit=20):
    """Human-readable difference of two quad sets (already canonical/normalised)."""
    missing = sorted(map(repr, set(expected) - set(actual)))
    extra = sorted(map(repr, set(actual) - set(expected)))
    lines = ['missing %d, unexpected %d' % (len(missing), len(extra))]
    lines += ['  - ' + x for x in missing[:limit]]
    lines += ['  + ' + x for x in extra[:limit]]
    return '\n'.join(lines)


def isomorphic(a, b):
    return canonical(a) == canonical(b)

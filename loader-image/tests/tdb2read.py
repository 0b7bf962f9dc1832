"""A small, independent TDB2 reader for the tests (written from the format description, now docs/tdb2-format.md).

It reads what a query would read: each B+Tree from the root block named in its `.bpt`,
descending branch blocks to the leaves, so records come out in key order exactly as Jena
would see them. Node-table terms are decoded from the RDF Thrift (compact protocol) bytes in
`nodes-data.obj`; inline NodeIds are decoded to (datatype, value).

Terms are tuples:
    ('iri', str) | ('bnode', label) | ('lit', lex, lang, datatype, direction)
Simple and xsd:string literals are ('lit', lex, None, None, None).
"""
import hashlib
import os
import re
import struct

BLOCK = 8192
TRIPLE_INDEXES = ('SPO', 'POS', 'OSP')
QUAD_INDEXES = ('GSPO', 'GPOS', 'GOSP', 'SPOG', 'POSG', 'OSPG')
ALL_TREES = ('nodes',) + TRIPLE_INDEXES + QUAD_INDEXES + ('prefixes', 'GPU')
XSD = 'http://www.w3.org/2001/XMLSchema#'
RDF_DIRLANGSTRING = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#dirLangString'


class FormatError(Exception):
    pass


def data_dir(db):
    """The directory holding the TDB2 files: DB itself if it is a generation, else the
    highest-numbered Data-NNNN inside it (Jena's rule)."""
    if os.path.exists(os.path.join(db, 'nodes.bpt')):
        return db
    gens = [n for n in os.listdir(db) if re.fullmatch(r'Data-[0-9]+', n)]
    if not gens:
        raise FormatError('no Data-NNNN generation in %s' % db)
    return os.path.join(db, max(gens, key=lambda n: int(n[5:])))


def key_value_len(name):
    if name in ('nodes', 'prefixes'):
        return 16, 8
    return 8 * len(name), 0


class BPlusTree:
    def __init__(self, ddir, name):
        self.name = name
        self.klen, self.vlen = key_value_len(name)
        self.rlen = self.klen + self.vlen
        x = (BLOCK - 4 - self.rlen) // (self.rlen + 4)
        order = (x + 1) // 2
        self.max_rec = 2 * order - 1
        self.ptr_base = 4 + self.max_rec * self.rlen
        with open(os.path.join(ddir, name + '.bpt'), 'rb') as f:
            st = f.read()
        if len(st) < 24:
            raise FormatError('%s.bpt: %d bytes, want 24' % (name, len(st)))
        self.root, self.node_limit, self.rec_limit = struct.unpack('>qqq', st[:24])
        with open(os.path.join(ddir, name + '.idn'), 'rb') as f:
            self.idn = f.read()
        with open(os.path.join(ddir, name + '.dat'), 'rb') as f:
            self.dat = f.read()
        for ext, data in (('idn', self.idn), ('dat', self.dat)):
            if len(data) % BLOCK:
                raise FormatError('%s.%s size %d is not a multiple of %d' % (name, ext, len(data), BLOCK))

    def _branch(self, i):
        if (i + 1) * BLOCK > len(self.idn):
            raise FormatError('%s: branch block %d beyond .idn' % (self.name, i))
        b = memoryview(self.idn)[i * BLOCK:(i + 1) * BLOCK]
        typ, count = b[0], int.from_bytes(b[1:4], 'big')
        if typ not in (6, 7):
            raise FormatError('%s: branch block %d has type %d' % (self.name, i, typ))
        ptrs = struct.unpack_from('>%di' % (count + 1), b, self.ptr_base)
        return typ, ptrs

    def _leaf(self, i):
        if (i + 1) * BLOCK > len(self.dat):
            raise FormatError('%s: leaf block %d beyond .dat' % (self.name, i))
        count, = struct.unpack_from('>i', self.dat, i * BLOCK)
        base = i * BLOCK + 8
        return [self.dat[base + j * self.rlen: base + (j + 1) * self.rlen] for j in range(count)]

    def records(self):
        """All records (bytes, key then value) in tree order, from the root down."""
        out = []
        stack = [(self.root, False)]
        # iterative DFS keeping child order: push children reversed
        while stack:
            blk, is_leaf = stack.pop()
            if is_leaf:
                out.extend(self._leaf(blk))
                continue
            typ, ptrs = self._branch(blk)
            for p in reversed(ptrs):
                stack.append((p, typ == 7))
        return out


# ----------------------------------------------------------------------------- thrift
def _varint(d, p):
    shift = r = 0
    while True:
        b = d[p]; p += 1
        r |= (b & 0x7f) << shift; shift += 7
        if not b & 0x80:
            return r, p


def _read_struct_strings(d, p):
    """Read a struct whose fields are strings; returns ({fid: str}, end)."""
    out = {}
    last = 0
    while True:
        h = d[p]; p += 1
        if h == 0:
            return out, p
        t, delta = h & 0x0f, h >> 4
        if delta:
            fid = last + delta
        else:
            z, p = _varint(d, p); fid = (z >> 1) ^ -(z & 1)
        last = fid
        if t != 8:
            raise FormatError('unexpected thrift type %d in string struct' % t)
        n, p = _varint(d, p)
        out[fid] = bytes(d[p:p + n]).decode('utf-8'); p += n


def read_term(d, p):
    """Decode one RDF_Term at offset p. Returns (term, end)."""
    h = d[p]; p += 1
    fid, t = h >> 4, h & 0x0f
    if t != 12:
        raise FormatError('RDF_Term field %d has type %d at %d' % (fid, t, p - 1))
    if fid == 1:
        f, p = _read_struct_strings(d, p); term = ('iri', f[1])
    elif fid == 2:
        f, p = _read_struct_strings(d, p); term = ('bnode', f[1])
    elif fid == 3:
        f, p = _read_struct_strings(d, p)
        term = ('lit', f[1], f.get(2) or None, f.get(3) or None, f.get(5) or None)
    elif fid == 9:
        parts = []
        last = 0
        while True:
            hh = d[p]; p += 1
            if hh == 0:
                break
            sub, p = read_term(d, p)
            parts.append(sub)
        term = ('triple',) + tuple(parts)
    else:
        raise FormatError('unsupported RDF_Term field %d at %d' % (fid, p - 1))
    if d[p] != 0:
        raise FormatError('RDF_Term union not terminated at %d' % p)
    return term, p + 1


# ----------------------------------------------------------------------------- NodeIds
INT_CODES = {1: 'integer', 10: 'positiveInteger', 11: 'negativeInteger', 12: 'nonNegativeInteger',
             13: 'nonPositiveInteger', 14: 'long', 15: 'int', 16: 'short', 17: 'byte',
             18: 'unsignedLong', 19: 'unsignedInt', 20: 'unsignedShort', 21: 'unsignedByte'}


def is_inline(nid):
    return bool(nid >> 63)


def decode_inline(v):
    """('double', float) | (int-type, int) | ('decimal', (unscaled, scale)) | ('float', bits)
    | ('dateTime'|'dateTimeStamp'|'date', fields tuple) | ('boolean', bool)."""
    if (v >> 62) & 1:
        x = v & ((1 << 62) - 1)
        sign, e9, m = (x >> 61) & 1, (x >> 52) & 0x1ff, x & ((1 << 52) - 1)
        e11 = 0 if e9 == 0 else 0x7ff if e9 == 0x1ff else e9 - 255 + 1023
        return ('double', struct.unpack('>d', ((sign << 63) | (e11 << 52) | m).to_bytes(8, 'big'))[0])
    code, val = (v >> 56) & 0x3f, v & ((1 << 56) - 1)
    if code in INT_CODES:
        return (INT_CODES[code], val - (1 << 56) if val >> 55 else val)
    if code == 2:
        scale = (val >> 48) & 0xff
        u = val & ((1 << 48) - 1)
        return ('decimal', (u - (1 << 48) if u >> 47 else u, scale - 256 if scale >= 128 else scale))
    if code == 3:
        return ('float', val & 0xffffffff)
    if code in (5, 6, 7):
        return ({5: 'dateTime', 6: 'dateTimeStamp', 7: 'date'}[code],
                ((val >> 49) & 0x7f, (val >> 36) & 0x1fff, (val >> 32) & 0xf, (val >> 27) & 0x1f,
                 (val >> 22) & 0x1f, (val >> 16) & 0x3f, val & 0xffff))
    if code == 8:
        return ('boolean', bool(val))
    raise FormatError('unknown inline NodeId %016x' % v)


def node_hash(term):
    """The node-table key Jena computes for a term (spec 4.2)."""
    k = term[0]
    if k == 'iri':
        s = term[1] + '|||uri'
    elif k == 'bnode':
        s = term[1] + '|||bnode'
    elif k == 'lit':
        _, lex, lang, dt, direction = term
        if lang and direction:
            dt = RDF_DIRLANGSTRING
        elif lang:
            dt = None
        s = '%s|%s|%s|literal' % (lex, lang or '', dt or '')
    else:
        raise FormatError('no hash rule for %r' % (term,))
    # Java's String.getBytes(UTF_8) writes '?' for a lone surrogate; so does Python's 'replace'
    return hashlib.md5(s.encode('utf-8', 'replace')).digest()


# ----------------------------------------------------------------------------- database
class Database:
    """Everything in one generation, decoded. `trees[name]` is the record list in tree order;
    `index[name]` the same as tuples of ints (NodeIds in the index's column order)."""

    def __init__(self, db):
        self.path = db
        self.dir = data_dir(db)
        self._trees = {}
        with open(os.path.join(self.dir, 'nodes-data.obj'), 'rb') as f:
            self.obj = f.read()
        pfx = os.path.join(self.dir, 'prefixes-data.obj')
        self.prefix_obj = open(pfx, 'rb').read() if os.path.exists(pfx) else b''

    def tree(self, name):
        if name not in self._trees:
            self._trees[name] = BPlusTree(self.dir, name).records()
        return self._trees[name]

    def index(self, name):
        n = len(name)
        return [struct.unpack('>%dQ' % n, r) for r in self.tree(name)]

    def node_records(self, name='nodes'):
        """[(hash bytes, NodeId)] in tree order."""
        return [(r[:16], struct.unpack('>Q', r[16:])[0]) for r in self.tree(name)]

    def term_at(self, offset, obj=None):
        return read_term(self.obj if obj is None else obj, offset)[0]

    def node_table(self):
        """{NodeId: term} for every record of the `nodes` tree."""
        return {nid: self.term_at(nid) for _, nid in self.node_records()}

    def term(self, nid, table=None):
        """A NodeId as a term: ('inline', kind, value) for inline ids."""
        if is_inline(nid):
            return ('inline',) + decode_inline(nid)
        if table is not None and nid in table:
            return table[nid]
        return self.term_at(nid)

    def quads(self):
        """Decoded content: set of (g, s, p, o) terms, g None for the default graph."""
        table = self.node_table()
        out = set()
        for s, p, o in self.index('SPO'):
            out.add((None, self.term(s, table), self.term(p, table), self.term(o, table)))
        for g, s, p, o in self.index('GSPO'):
            out.add((self.term(g, table), self.term(s, table), self.term(p, table), self.term(o, table)))
        return out

    def prefixes(self):
        """Set of (graph term, prefix, namespace term) decoded from GPU and the prefix node table."""
        out = set()
        for g, p, u in self.index('GPU'):
            pl = read_term(self.prefix_obj, p)[0]
            out.add((read_term(self.prefix_obj, g)[0], pl[1], read_term(self.prefix_obj, u)[0]))
        return out

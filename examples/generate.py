#!/usr/bin/env python3
"""Generate the sample dump shipped in examples/: a small BSBM-like product catalogue.

    python3 examples/generate.py [--seed 42] [--products 4000] [--out examples]

Writes, deterministically (same seed -> same bytes; gzip with mtime 0):
  catalog.ttl.gz         Turtle with prefixes, default graph: product types (a hierarchy),
                         producers (with a blank-node address), products with features,
                         numeric/textual properties, dates, decimals and booleans.
  catalog-graphs.nq.gz   N-Quads with one named graph per vendor (offers: prices, validity
                         dateTimes with time zones, delivery days, stock flags, a few blank-node
                         shipping terms) and per rating site (reviews: language-tagged titles
                         and texts, integer ratings, review dateTimes), plus a provenance graph.
Standard library only.
"""
import argparse
import gzip
import io
import os
import random

CAT = 'http://example.org/catalog/'
VOC = 'http://example.org/catalog/vocab#'
XSD = 'http://www.w3.org/2001/XMLSchema#'
RDF_TYPE = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type'
RDFS = 'http://www.w3.org/2000/01/rdf-schema#'
DC = 'http://purl.org/dc/elements/1.1/'

WORDS = ('alpine amber arc aurora basalt beacon birch blaze bolt breeze canyon cedar cinder '
         'cobalt comet coral crest delta dune ember fern fjord flint frost glacier granite grove '
         'harbor hazel horizon ion iris ivory jade juniper kelp lagoon lark lava lumen maple '
         'marble meadow mesa mist moss nebula nova oak onyx orbit pebble pine plume prism quartz '
         'quill rain raven reef ridge river sage shale sierra slate solar spruce storm summit '
         'tide timber topaz tundra umber vale vapor willow zephyr').split()
COUNTRIES = ['DE', 'FR', 'GB', 'US', 'JP', 'ES', 'IT', 'NL', 'SE', 'AT', 'CH', 'CN', 'KR', 'BR']
CITIES = ['Berlin', 'Lyon', 'Leeds', 'Austin', 'Osaka', 'Sevilla', 'Torino', 'Utrecht', 'Malmö',
          'Graz', 'Zürich', '北京', '서울', 'São Paulo']
LANGS = ['en', 'en-GB', 'de', 'de-AT', 'fr', 'es', 'ja', 'zh-Hant-TW']
TEXT = {
    'en': 'a sturdy and reliable choice', 'en-GB': 'a rather splendid colour and finish',
    'de': 'sehr gut verarbeitet, schöne Größe', 'de-AT': 'leiwand, passt perfekt',
    'fr': 'très pratique, qualité étonnante', 'es': 'muy cómodo y fácil de usar',
    'ja': 'とても使いやすいです', 'zh-Hant-TW': '品質很好，非常推薦',
}
TIMEZONES = ['Z', '+01:00', '+02:00', '-05:00', '+05:30', '+09:00', '-03:30', '']


def esc(s):
    return s.replace('\\', '\\\\').replace('"', '\\"').replace('\n', '\\n').replace('\r', '\\r')


def lit(value, dt=None, lang=None):
    s = '"%s"' % esc(value)
    if lang:
        return s + '@' + lang
    if dt:
        return s + '^^<%s%s>' % (XSD, dt)
    return s


def iri(s):
    return '<%s>' % s


def words(rnd, n):
    return ' '.join(rnd.choice(WORDS) for _ in range(n))


class Turtle:
    """Groups statements by subject and writes them with prefixed names."""

    PREFIXES = [('cat', CAT), ('voc', VOC), ('xsd', XSD), ('rdfs', RDFS), ('dc', DC),
                ('rdf', 'http://www.w3.org/1999/02/22-rdf-syntax-ns#')]

    def __init__(self):
        self.out = io.StringIO()
        for p, ns in self.PREFIXES:
            self.out.write('@prefix %s: <%s> .\n' % (p, ns))
        self.out.write('\n')

    def short(self, term):
        if term.startswith('<'):
            body = term[1:-1]
            for p, ns in self.PREFIXES:
                local = body[len(ns):]
                if body.startswith(ns) and local and all(c.isalnum() or c in '_-' for c in local):
                    return '%s:%s' % (p, local)
        if '^^<' + XSD in term:
            lexical, dt = term.rsplit('^^<', 1)
            return '%s^^xsd:%s' % (lexical, dt[len(XSD):-1])
        return term

    def subject(self, s, pairs):
        self.out.write(self.short(s))
        for i, (p, o) in enumerate(pairs):
            pp = 'a' if p == iri(RDF_TYPE) else self.short(p)
            self.out.write(('\n    ' if i else ' ') + '%s %s' % (pp, o if o.startswith('[') else self.short(o)))
            self.out.write(' ;' if i < len(pairs) - 1 else ' .\n')
        self.out.write('\n')


def gz_write(path, text):
    with open(path, 'wb') as raw:
        with gzip.GzipFile(filename='', mode='wb', fileobj=raw, mtime=0, compresslevel=9) as g:
            g.write(text.encode('utf-8'))


def generate(seed, n_products, outdir):
    rnd = random.Random(seed)
    ttl = Turtle()
    v = lambda name: iri(VOC + name)  # noqa: E731
    c = lambda name: iri(CAT + name.replace('/', '-'))  # noqa: E731

    # product types: a small hierarchy
    n_types = 24
    for t in range(1, n_types + 1):
        pairs = [(iri(RDF_TYPE), v('ProductType')), (iri(RDFS + 'label'), lit(words(rnd, 2).title()))]
        if t > 1:
            pairs.append((iri(RDFS + 'subClassOf'), c('type/%d' % (1 if t <= 5 else rnd.randint(2, 5)))))
        ttl.subject(c('type/%d' % t), pairs)
    n_features = 300
    for f in range(1, n_features + 1):
        ttl.subject(c('feature/%d' % f), [(iri(RDF_TYPE), v('Feature')), (iri(RDFS + 'label'), lit(words(rnd, 2)))])

    # producers, each with a blank-node address
    n_producers = 60
    for p in range(1, n_producers + 1):
        k = rnd.randrange(len(COUNTRIES))
        address = '[ voc:street %s ; voc:city %s ; voc:postcode %s ]' % (
            lit('%d %s Street' % (rnd.randint(1, 300), rnd.choice(WORDS).title())), lit(CITIES[k]),
            lit('%05d' % rnd.randint(1000, 99999)))
        ttl.subject(c('producer/%d' % p), [
            (iri(RDF_TYPE), v('Producer')), (iri(RDFS + 'label'), lit('%s %s Works' % (rnd.choice(WORDS).title(), CITIES[k]))),
            (v('country'), iri('http://example.org/country/' + COUNTRIES[k])),
            (v('homepage'), iri('http://producer%d.example.com/' % p)), (v('address'), address),
            (v('founded'), lit('%04d' % rnd.randint(1890, 2015), 'gYear')),
        ])

    # products
    for i in range(1, n_products + 1):
        y, m, d = rnd.randint(2000, 2024), rnd.randint(1, 12), rnd.randint(1, 28)
        pairs = [
            (iri(RDF_TYPE), v('Product')), (iri(RDF_TYPE), c('type/%d' % rnd.randint(6, n_types))),
            (iri(RDFS + 'label'), lit(words(rnd, 3))),
            (iri(RDFS + 'comment'), lit(words(rnd, rnd.randint(12, 40)).capitalize() + '.')),
            (v('producer'), c('producer/%d' % rnd.randint(1, n_producers))),
            (iri(DC + 'date'), lit('%04d-%02d-%02d' % (y, m, d), 'date')),
            (v('weightKg'), lit('%d.%02d' % (rnd.randint(0, 40), rnd.randint(0, 99)), 'decimal')),
            (v('ecoFriendly'), lit(rnd.choice(['true', 'false']), 'boolean')),
        ]
        for f in sorted(rnd.sample(range(1, n_features + 1), rnd.randint(3, 7))):
            pairs.append((v('feature'), c('feature/%d' % f)))
        for k in range(1, rnd.randint(3, 6)):
            pairs.append((v('numeric%d' % k), lit(str(rnd.randint(1, 2000)), 'integer')))
        for k in range(1, rnd.randint(2, 4)):
            pairs.append((v('textual%d' % k), lit(words(rnd, rnd.randint(3, 9)))))
        if i % 97 == 0:
            pairs.append((v('serial'), lit(str(rnd.randint(10 ** 20, 10 ** 21)), 'integer')))  # not inlinable
        ttl.subject(c('product/%d' % i), pairs)
    gz_write(os.path.join(outdir, 'catalog.ttl.gz'), ttl.out.getvalue())

    # named graphs: vendors' offers, rating sites' reviews, provenance
    nq = io.StringIO()

    def quad(s, p, o, g):
        nq.write('%s %s %s %s .\n' % (s, p, o, g))
    n_vendors, n_sites = 12, 4
    prov = c('graph/provenance')
    for vnd in range(1, n_vendors + 1):
        g = c('graph/vendor%d' % vnd)
        quad(g, iri(DC + 'publisher'), c('vendor/%d' % vnd), prov)
        quad(g, iri(DC + 'date'), lit('2024-%02d-%02dT06:00:00Z' % (rnd.randint(1, 12), rnd.randint(1, 28)), 'dateTime'), prov)
        quad(c('vendor/%d' % vnd), iri(RDFS + 'label'), lit('Vendor %s' % rnd.choice(WORDS).title()), g)
        quad(c('vendor/%d' % vnd), v('country'), iri('http://example.org/country/' + rnd.choice(COUNTRIES)), g)
    for o in range(1, n_products * 4 + 1):
        vnd = rnd.randint(1, n_vendors)
        g, off = c('graph/vendor%d' % vnd), c('offer/%d' % o)
        y, m, d = 2024, rnd.randint(1, 12), rnd.randint(1, 28)
        tz = rnd.choice(TIMEZONES)
        quad(off, iri(RDF_TYPE), v('Offer'), g)
        quad(off, v('product'), c('product/%d' % rnd.randint(1, n_products)), g)
        quad(off, v('vendor'), c('vendor/%d' % vnd), g)
        quad(off, v('price'), lit('%d.%02d' % (rnd.randint(5, 2500), rnd.randint(0, 99)), 'decimal'), g)
        quad(off, v('validFrom'), lit('%04d-%02d-%02dT%02d:00:00%s' % (y, m, d, rnd.randint(0, 23), tz), 'dateTime'), g)
        quad(off, v('validTo'), lit('%04d-%02d-%02dT23:59:59%s' % (y + 1, m, d, tz), 'dateTime'), g)
        quad(off, v('deliveryDays'), lit(str(rnd.randint(1, 21)), 'integer'), g)
        quad(off, v('inStock'), lit(rnd.choice(['true', 'false', '1', '0']), 'boolean'), g)
        if o % 50 == 0:
            b = '_:ship%d' % o
            quad(off, v('shipping'), b, g)
            quad(b, v('carrier'), lit(rnd.choice(['DHL', 'UPS', 'La Poste', 'ヤマト運輸'])), g)
            quad(b, v('costEUR'), lit('%d.%d' % (rnd.randint(0, 30), rnd.randint(0, 9)), 'decimal'), g)
    for site in range(1, n_sites + 1):
        quad(c('graph/site%d' % site), iri(DC + 'publisher'), c('site/%d' % site), prov)
    for r in range(1, n_products * 2 + 1):
        g, rev = c('graph/site%d' % rnd.randint(1, n_sites)), c('review/%d' % r)
        lang = rnd.choice(LANGS)
        quad(rev, iri(RDF_TYPE), v('Review'), g)
        quad(rev, v('reviewFor'), c('product/%d' % rnd.randint(1, n_products)), g)
        quad(rev, iri(DC + 'title'), lit(words(rnd, 4).capitalize(), lang=lang), g)
        quad(rev, v('text'), lit('%s: %s.' % (words(rnd, 6).capitalize(), TEXT[lang]), lang=lang), g)
        for k in range(1, rnd.randint(2, 5)):
            quad(rev, v('rating%d' % k), lit(str(rnd.randint(1, 10)), 'integer'), g)
        quad(rev, v('reviewDate'), lit('2024-%02d-%02dT%02d:%02d:00Z' % (
            rnd.randint(1, 12), rnd.randint(1, 28), rnd.randint(0, 23), rnd.randint(0, 59)), 'dateTime'), g)
    gz_write(os.path.join(outdir, 'catalog-graphs.nq.gz'), nq.getvalue())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--seed', type=int, default=42)
    ap.add_argument('--products', type=int, default=4000)
    ap.add_argument('--out', default=os.path.dirname(os.path.abspath(__file__)))
    a = ap.parse_args()
    generate(a.seed, a.products, a.out)


if __name__ == '__main__':
    main()

//! The values of statements, qualifiers and references, and their Turtle forms: the simple
//! value (wdt:, ps:, pq:, pr:) and the full value node (psv:, pqv:, prv: → v:HASH).

use crate::rng::digest;
use crate::ttl::{push_i128, push_padded, push_pct, push_str, push_typed, push_u64};
use crate::vocab::{Prop, LANGUAGES};

/// A decimal `mantissa × 10^-scale`, written with its sign always (`+1.96`, `-45`, `+12.3450`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dec {
    pub mantissa: i128,
    pub scale: u8,
}

impl Dec {
    pub fn push(self, buf: &mut Vec<u8>) {
        if self.mantissa >= 0 {
            buf.push(b'+');
        }
        push_fixed(buf, self.mantissa, self.scale, true);
    }

    /// The amount times 10^exp (the normalized amount of a unit that is a power of ten of its
    /// base unit), keeping the written digits as Wikibase's conversion does.
    pub fn shift(self, exp: i32) -> Dec {
        if exp >= self.scale as i32 {
            Dec { mantissa: self.mantissa * 10i128.pow((exp - self.scale as i32) as u32), scale: 0 }
        } else {
            Dec { mantissa: self.mantissa, scale: (self.scale as i32 - exp) as u8 }
        }
    }
}

/// `m × 10^-scale` in plain decimal notation; trailing fraction zeros kept or dropped.
fn push_fixed(buf: &mut Vec<u8>, m: i128, scale: u8, keep_zeros: bool) {
    if scale == 0 {
        push_i128(buf, m);
        return;
    }
    let mut digits = Vec::with_capacity(40);
    push_i128(&mut digits, m.abs());
    let scale = scale as usize;
    if digits.len() <= scale {
        let mut padded = vec![b'0'; scale + 1 - digits.len()];
        padded.extend_from_slice(&digits);
        digits = padded;
    }
    let (int, mut frac) = digits.split_at(digits.len() - scale);
    if !keep_zeros {
        while let [rest @ .., b'0'] = frac {
            frac = rest;
        }
    }
    if m < 0 {
        buf.push(b'-');
    }
    buf.extend_from_slice(int);
    if !frac.is_empty() {
        buf.push(b'.');
        buf.extend_from_slice(frac);
    }
}

/// A point in time with Wikibase's precision (0: a billion years ... 9: year, 10: month,
/// 11: day) and calendar model. Years are astronomical (XSD 1.1: year 0 is 1 BCE).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Time {
    pub year: i64,
    pub month: u8,
    pub day: u8,
    pub precision: u8,
    pub julian: bool,
}

impl Time {
    /// The xsd:dateTime lexical form (`1952-03-11T00:00:00Z`, `-13798000000-01-01T00:00:00Z`).
    pub fn push_lex(self, buf: &mut Vec<u8>) {
        if self.year < 0 {
            buf.push(b'-');
        }
        push_padded(buf, self.year.unsigned_abs(), 4);
        buf.push(b'-');
        push_padded(buf, self.month as u64, 2);
        buf.push(b'-');
        push_padded(buf, self.day as u64, 2);
        buf.extend_from_slice(b"T00:00:00Z");
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quantity {
    pub amount: Dec,
    /// The uncertainty: bounds are amount ± it.
    pub bound: Option<Dec>,
    /// The unit's item, 199 for "1" (no unit).
    pub unit: u64,
    /// The base unit and the power of ten to it (km → m: 3), when Wikibase normalizes it.
    pub normalized: Option<(u64, i32)>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Globe {
    /// Latitude and longitude × 10^scale.
    pub lat: i64,
    pub lon: i64,
    pub scale: u8,
    pub precision: &'static str,
    /// The globe's item (2: Earth).
    pub globe: u64,
}

impl Globe {
    pub fn push_wkt(&self, buf: &mut Vec<u8>) {
        if self.globe != 2 {
            buf.extend_from_slice(b"<http://www.wikidata.org/entity/Q");
            push_u64(buf, self.globe);
            buf.extend_from_slice(b"> ");
        }
        buf.extend_from_slice(b"Point(");
        push_fixed(buf, self.lon as i128, self.scale, false);
        buf.push(b' ');
        push_fixed(buf, self.lat as i128, self.scale, false);
        buf.push(b')');
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    Item(u64),
    Ext(String),
    Str(String),
    Mono(String, u16),
    Time(Time),
    Quantity(Quantity),
    Globe(Globe),
    Url(String),
    Commons(String),
    /// "Some value": a blank node, labelled by this digest (as the dump does).
    Some([u64; 3]),
    /// "No value": no value triple, the class wdno:P instead.
    No,
}

/// The simple form of a value (wdt:, ps:, pq:, pr:). `skolem` writes "some value" as the
/// Query Service's skolem IRI instead of a blank node.
pub fn push_simple(buf: &mut Vec<u8>, v: &Val, skolem: bool) {
    match v {
        Val::Item(q) => {
            buf.extend_from_slice(b"wd:Q");
            push_u64(buf, *q);
        }
        Val::Ext(s) | Val::Str(s) => push_str(buf, s),
        Val::Mono(s, lang) => {
            push_str(buf, s);
            buf.push(b'@');
            buf.extend_from_slice(LANGUAGES[*lang as usize].0.as_bytes());
        }
        Val::Time(t) => {
            buf.push(b'"');
            t.push_lex(buf);
            buf.extend_from_slice(b"\"^^xsd:dateTime");
        }
        Val::Quantity(q) => {
            buf.push(b'"');
            q.amount.push(buf);
            buf.extend_from_slice(b"\"^^xsd:decimal");
        }
        Val::Globe(g) => {
            buf.push(b'"');
            g.push_wkt(buf);
            buf.extend_from_slice(b"\"^^geo:wktLiteral");
        }
        Val::Url(u) => {
            buf.push(b'<');
            buf.extend_from_slice(u.as_bytes());
            buf.push(b'>');
        }
        Val::Commons(f) => {
            buf.extend_from_slice(b"<http://commons.wikimedia.org/wiki/Special:FilePath/");
            push_pct(buf, f, b"%20");
            buf.push(b'>');
        }
        Val::Some(d) => push_blank(buf, d, skolem),
        Val::No => unreachable!("no value has no simple form"),
    }
}

pub fn push_blank(buf: &mut Vec<u8>, d: &[u64; 3], skolem: bool) {
    if skolem {
        buf.extend_from_slice(b"<http://www.wikidata.org/.well-known/genid/");
        crate::ttl::push_hex(buf, d, 32);
        buf.push(b'>');
    } else {
        buf.extend_from_slice(b"_:");
        crate::ttl::push_hex(buf, d, 32);
    }
}

/// The normalized IRI of an external identifier, when its property has a formatter.
pub fn push_normalized_id(buf: &mut Vec<u8>, prop: &Prop, id: &str) -> bool {
    match &prop.formatter {
        Some((before, after)) => {
            buf.push(b'<');
            buf.extend_from_slice(before.as_bytes());
            buf.extend_from_slice(id.as_bytes());
            buf.extend_from_slice(after.as_bytes());
            buf.push(b'>');
            true
        }
        None => false,
    }
}

/// The body of a value node after `v:HASH a wikibase:XValue`: its predicate lines up to the
/// final ` .`, without the normalization line; returns (class, triples in the body).
pub fn value_body(buf: &mut Vec<u8>, v: &Val) -> (&'static [u8], u64) {
    match v {
        Val::Time(t) => {
            buf.extend_from_slice(b" ;\n\twikibase:timeValue \"");
            t.push_lex(buf);
            buf.extend_from_slice(b"\"^^xsd:dateTime ;\n\twikibase:timePrecision ");
            crate::ttl::push_int(buf, t.precision as u64);
            buf.extend_from_slice(b" ;\n\twikibase:timeTimezone \"0\"^^xsd:integer ;\n\twikibase:timeCalendarModel ");
            buf.extend_from_slice(if t.julian {
                b"<http://www.wikidata.org/entity/Q1985786>"
            } else {
                b"<http://www.wikidata.org/entity/Q1985727>"
            });
            (b"wikibase:TimeValue", 4)
        }
        Val::Quantity(q) => {
            buf.extend_from_slice(b" ;\n\twikibase:quantityAmount \"");
            q.amount.push(buf);
            buf.extend_from_slice(b"\"^^xsd:decimal");
            let mut n = 1;
            if let Some(b) = q.bound {
                let upper = Dec { mantissa: q.amount.mantissa + b.mantissa, scale: q.amount.scale };
                let lower = Dec { mantissa: q.amount.mantissa - b.mantissa, scale: q.amount.scale };
                buf.extend_from_slice(b" ;\n\twikibase:quantityUpperBound \"");
                upper.push(buf);
                buf.extend_from_slice(b"\"^^xsd:decimal ;\n\twikibase:quantityLowerBound \"");
                lower.push(buf);
                buf.extend_from_slice(b"\"^^xsd:decimal");
                n += 2;
            }
            buf.extend_from_slice(b" ;\n\twikibase:quantityUnit <http://www.wikidata.org/entity/Q");
            push_u64(buf, q.unit);
            buf.push(b'>');
            (b"wikibase:QuantityValue", n + 1)
        }
        Val::Globe(g) => {
            buf.extend_from_slice(b" ;\n\twikibase:geoLatitude ");
            let mut lex = Vec::with_capacity(24);
            push_fixed(&mut lex, g.lat as i128, g.scale, false);
            push_typed(buf, &lex, b"xsd:double");
            lex.clear();
            push_fixed(&mut lex, g.lon as i128, g.scale, false);
            buf.extend_from_slice(b" ;\n\twikibase:geoLongitude ");
            push_typed(buf, &lex, b"xsd:double");
            buf.extend_from_slice(b" ;\n\twikibase:geoPrecision ");
            push_typed(buf, g.precision.as_bytes(), b"xsd:double");
            buf.extend_from_slice(b" ;\n\twikibase:geoGlobe <http://www.wikidata.org/entity/Q");
            push_u64(buf, g.globe);
            buf.push(b'>');
            (b"wikibase:GlobecoordinateValue", 4)
        }
        _ => unreachable!("only time, quantity and globe values have value nodes"),
    }
}

/// The digest that names a value node: over its content, as the dump's MD5 is.
pub fn value_digest(body: &[u8]) -> [u64; 3] {
    digest(body)
}

/// `mis-x-Q…`-style tags need the Q number as text.
pub fn push_q_text(s: &mut String, q: u64) {
    let mut b = Vec::new();
    push_u64(&mut b, q);
    s.push('Q');
    s.push_str(std::str::from_utf8(&b).expect("digits"));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(f: impl FnOnce(&mut Vec<u8>)) -> String {
        let mut b = Vec::new();
        f(&mut b);
        String::from_utf8(b).unwrap()
    }

    #[test]
    fn decimals_are_signed_and_keep_their_digits() {
        assert_eq!(text(|b| Dec { mantissa: 196, scale: 2 }.push(b)), "+1.96");
        assert_eq!(text(|b| Dec { mantissa: -45, scale: 0 }.push(b)), "-45");
        assert_eq!(text(|b| Dec { mantissa: 123450, scale: 4 }.push(b)), "+12.3450");
        assert_eq!(text(|b| Dec { mantissa: 5, scale: 3 }.push(b)), "+0.005");
        assert_eq!(text(|b| Dec { mantissa: -5, scale: 3 }.push(b)), "-0.005");
        assert_eq!(Dec { mantissa: 17083, scale: 3 }.shift(6), Dec { mantissa: 17083000, scale: 0 });
        assert_eq!(Dec { mantissa: 17083, scale: 3 }.shift(-2), Dec { mantissa: 17083, scale: 5 });
    }

    #[test]
    fn dates_beyond_four_digits_and_before_year_one() {
        let t = |year| Time { year, month: 1, day: 1, precision: 9, julian: false };
        assert_eq!(text(|b| t(1952).push_lex(b)), "1952-01-01T00:00:00Z");
        assert_eq!(text(|b| t(-13_798_000_000).push_lex(b)), "-13798000000-01-01T00:00:00Z");
        assert_eq!(text(|b| t(-500).push_lex(b)), "-0500-01-01T00:00:00Z");
        assert_eq!(text(|b| t(0).push_lex(b)), "0000-01-01T00:00:00Z");
        assert_eq!(text(|b| t(12017).push_lex(b)), "12017-01-01T00:00:00Z");
    }

    #[test]
    fn points_as_wkt() {
        let g = Globe { lat: 51_566_527_777_778, lon: -14_544_444_444_444, scale: 12, precision: "1", globe: 2 };
        assert_eq!(text(|b| g.push_wkt(b)), "Point(-14.544444444444 51.566527777778)");
        let moon = Globe { lat: 100, lon: -2500, scale: 2, precision: "1", globe: 405 };
        assert_eq!(text(|b| moon.push_wkt(b)), "<http://www.wikidata.org/entity/Q405> Point(-25 1)");
    }
}

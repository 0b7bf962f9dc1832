//! Writing Turtle as the dump writes it: a subject, then `;`-separated predicates on their own
//! tab-indented lines, `,`-separated objects on lines of two tabs, a blank line after each
//! statement. Every object written counts one triple.

pub struct Ttl {
    pub buf: Vec<u8>,
    pub triples: u64,
    /// 0: between statements, 1: after a subject, 2: after a predicate.
    state: u8,
    objects: u32,
}

impl Ttl {
    pub fn new(capacity: usize) -> Ttl {
        Ttl { buf: Vec::with_capacity(capacity), triples: 0, state: 0, objects: 0 }
    }

    /// Starts a statement; the caller writes the subject into the returned buffer.
    pub fn s(&mut self) -> &mut Vec<u8> {
        debug_assert_eq!(self.state, 0, "statement not ended");
        self.state = 1;
        &mut self.buf
    }

    /// Starts a predicate; the caller writes it.
    pub fn p(&mut self) -> &mut Vec<u8> {
        match self.state {
            1 => self.buf.push(b' '),
            2 => self.buf.extend_from_slice(b" ;\n\t"),
            _ => panic!("predicate without a subject"),
        }
        self.state = 2;
        self.objects = 0;
        &mut self.buf
    }

    /// Starts an object (one triple); the caller writes it.
    pub fn o(&mut self) -> &mut Vec<u8> {
        debug_assert_eq!(self.state, 2, "object without a predicate");
        if self.objects == 0 {
            self.buf.push(b' ');
        } else {
            self.buf.extend_from_slice(b",\n\t\t");
        }
        self.objects += 1;
        self.triples += 1;
        &mut self.buf
    }

    /// `p o` with both given as bytes.
    pub fn po(&mut self, p: &[u8], o: &[u8]) {
        self.p().extend_from_slice(p);
        self.o().extend_from_slice(o);
    }

    pub fn end(&mut self) {
        debug_assert_eq!(self.state, 2, "statement without a predicate");
        self.buf.extend_from_slice(b" .\n\n");
        self.state = 0;
    }

    /// Rolls back to an earlier length and count (between statements).
    pub fn truncate(&mut self, len: usize, triples: u64) {
        self.buf.truncate(len);
        self.triples = triples;
        self.state = 0;
    }
}

pub fn push_u64(buf: &mut Vec<u8>, mut n: u64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    buf.extend_from_slice(&tmp[i..]);
}

pub fn push_i128(buf: &mut Vec<u8>, n: i128) {
    if n < 0 {
        buf.push(b'-');
    }
    let mut m = n.unsigned_abs();
    let mut tmp = [0u8; 40];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (m % 10) as u8;
        m /= 10;
        if m == 0 {
            break;
        }
    }
    buf.extend_from_slice(&tmp[i..]);
}

/// `n` in at least `width` digits, zero-padded.
pub fn push_padded(buf: &mut Vec<u8>, n: u64, width: usize) {
    let mut tmp = Vec::with_capacity(20);
    push_u64(&mut tmp, n);
    for _ in tmp.len()..width {
        buf.push(b'0');
    }
    buf.extend_from_slice(&tmp);
}

const HEX_LOWER: &[u8; 16] = b"0123456789abcdef";
const HEX_UPPER: &[u8; 16] = b"0123456789ABCDEF";

/// The first `n` hex digits (n <= 48) of a digest, lower case.
pub fn push_hex(buf: &mut Vec<u8>, d: &[u64; 3], n: usize) {
    for i in 0..n {
        let word = d[i / 16];
        let nibble = (word >> (60 - 4 * (i % 16))) & 0xF;
        buf.push(HEX_LOWER[nibble as usize]);
    }
}

/// A statement GUID as Wikibase writes it: 8-4-4-4-12 hex digits, upper or lower case.
pub fn push_guid(buf: &mut Vec<u8>, a: u64, b: u64, upper: bool) {
    let digits = if upper { HEX_UPPER } else { HEX_LOWER };
    for i in 0..32 {
        if matches!(i, 8 | 12 | 16 | 20) {
            buf.push(b'-');
        }
        let word = if i < 16 { a } else { b };
        buf.push(digits[((word >> (60 - 4 * (i % 16))) & 0xF) as usize]);
    }
}

/// A quoted string literal with Turtle's escapes.
pub fn push_str(buf: &mut Vec<u8>, s: &str) {
    buf.push(b'"');
    for &b in s.as_bytes() {
        match b {
            b'"' => buf.extend_from_slice(b"\\\""),
            b'\\' => buf.extend_from_slice(b"\\\\"),
            b'\n' => buf.extend_from_slice(b"\\n"),
            b'\r' => buf.extend_from_slice(b"\\r"),
            _ => buf.push(b),
        }
    }
    buf.push(b'"');
}

pub fn push_lang(buf: &mut Vec<u8>, s: &str, tag: &str) {
    push_str(buf, s);
    buf.push(b'@');
    buf.extend_from_slice(tag.as_bytes());
}

pub fn push_typed(buf: &mut Vec<u8>, lex: &[u8], datatype: &[u8]) {
    buf.push(b'"');
    buf.extend_from_slice(lex);
    buf.extend_from_slice(b"\"^^");
    buf.extend_from_slice(datatype);
}

pub fn push_int(buf: &mut Vec<u8>, n: u64) {
    buf.push(b'"');
    push_u64(buf, n);
    buf.extend_from_slice(b"\"^^xsd:integer");
}

/// `prefix:` + letter + number, e.g. `wd:Q42`, `wdt:P31`.
pub fn push_name(buf: &mut Vec<u8>, prefix: &[u8], letter: u8, n: u64) {
    buf.extend_from_slice(prefix);
    buf.push(letter);
    push_u64(buf, n);
}

/// Percent-encodes what an IRI path should not hold raw (as MediaWiki's wfUrlencode does):
/// non-ASCII bytes, spaces (as `enc_space`), quotes, and the characters Turtle forbids in IRIs.
pub fn push_pct(buf: &mut Vec<u8>, s: &str, enc_space: &[u8]) {
    for &b in s.as_bytes() {
        match b {
            b' ' => buf.extend_from_slice(enc_space),
            b'A'..=b'Z'
            | b'a'..=b'z'
            | b'0'..=b'9'
            | b'-'
            | b'_'
            | b'.'
            | b'~'
            | b'('
            | b')'
            | b','
            | b':'
            | b';'
            | b'!'
            | b'*'
            | b'@'
            | b'$'
            | b'/' => buf.push(b),
            _ => {
                buf.push(b'%');
                buf.push(HEX_UPPER[(b >> 4) as usize]);
                buf.push(HEX_UPPER[(b & 0xF) as usize]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_are_written_as_the_dump_writes_them() {
        let mut t = Ttl::new(0);
        t.s().extend_from_slice(b"wd:Q1");
        t.po(b"a", b"wikibase:Item");
        t.p().extend_from_slice(b"wdt:P31");
        t.o().extend_from_slice(b"wd:Q5");
        t.o().extend_from_slice(b"wd:Q6");
        t.end();
        assert_eq!(std::str::from_utf8(&t.buf).unwrap(), "wd:Q1 a wikibase:Item ;\n\twdt:P31 wd:Q5,\n\t\twd:Q6 .\n\n");
        assert_eq!(t.triples, 3);
    }

    #[test]
    fn numbers_hex_strings_and_iris() {
        let mut b = Vec::new();
        push_u64(&mut b, 0);
        b.push(b' ');
        push_i128(&mut b, -1234567890123456789012345);
        b.push(b' ');
        push_padded(&mut b, 476, 4);
        b.push(b' ');
        push_hex(&mut b, &[0x0123_4567_89ab_cdef, 0xfedc_ba98_7654_3210, 0], 20);
        b.push(b' ');
        push_str(&mut b, "a\"b\\c");
        b.push(b' ');
        push_pct(&mut b, "Dóuglas Adams' (x)", b"_");
        assert_eq!(
            std::str::from_utf8(&b).unwrap(),
            "0 -1234567890123456789012345 0476 0123456789abcdeffedc \"a\\\"b\\\\c\" D%C3%B3uglas_Adams%27_(x)"
        );
        let mut g = Vec::new();
        push_guid(&mut g, 0xF078_E5B3_F9A8_480E, 0xB7AC_D977_78CB_BEF9, true);
        assert_eq!(g, b"F078E5B3-F9A8-480E-B7AC-D97778CBBEF9");
    }
}

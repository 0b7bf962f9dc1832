//! RDF terms as TDB2 stores them: RDF Thrift (compact protocol) bytes in `nodes-data.obj`,
//! and the MD5 key of the `nodes` index (docs/tdb2-format.md §4).

use md5::{Digest, Md5};

pub mod rdf12;

pub const XSD_STRING: &str = "http://www.w3.org/2001/XMLSchema#string";
pub const RDF_LANG_STRING: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString";

/// A term ready for storage: language tags already formatted, `xsd:string` already folded
/// into the simple literal (`datatype: None`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Term<'a> {
    Iri(&'a str),
    /// The stored label (without `_:`).
    Blank(&'a str),
    Literal {
        lex: &'a str,
        lang: Option<&'a str>,
        datatype: Option<&'a str>,
    },
    /// RDF 1.2 language-tagged string with a base direction (`"x"@en--ltr`): `dir` is
    /// `"ltr"` or `"rtl"`, `lang` already formatted.
    DirLiteral {
        lex: &'a str,
        lang: &'a str,
        dir: &'a str,
    },
    /// RDF 1.2 triple term `<<( s p o )>>` (terms nested to any depth).
    Triple(&'a [Term<'a>; 3]),
}

pub(crate) fn put_varint(out: &mut Vec<u8>, mut n: u64) {
    loop {
        let b = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

pub(crate) fn put_string(out: &mut Vec<u8>, header: u8, s: &str) {
    out.push(header);
    put_varint(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

/// Appends the `RDF_Term` union in Thrift compact protocol, as `tdb2.xloader` writes it
/// (plain `RDF_Literal`, never the value forms).
pub fn encode_term(t: &Term<'_>, out: &mut Vec<u8>) {
    match *t {
        Term::Iri(iri) => {
            out.push(0x1C);
            put_string(out, 0x18, iri);
            out.extend_from_slice(&[0, 0]);
        }
        Term::Blank(label) => {
            out.push(0x2C);
            put_string(out, 0x18, label);
            out.extend_from_slice(&[0, 0]);
        }
        Term::Literal { lex, lang, datatype } => {
            out.push(0x3C);
            put_string(out, 0x18, lex); // field 1: lex
            if let Some(lang) = lang {
                put_string(out, 0x18, lang); // field 2: langtag (delta 1)
            } else if let Some(dt) = datatype {
                put_string(out, 0x28, dt); // field 3: datatype (delta 2)
            }
            out.extend_from_slice(&[0, 0]);
        }
        Term::DirLiteral { .. } | Term::Triple(_) => rdf12::encode_term(t, out),
    }
}

/// The 16-byte key of the `nodes` index: MD5 of `lex|lang|datatype|kind` (docs/tdb2-format.md §4).
pub fn node_hash(t: &Term<'_>) -> [u8; 16] {
    let key = match *t {
        Term::Iri(iri) => KeyInput::Iri(iri.as_bytes()),
        Term::Blank(label) => KeyInput::Blank(label.as_bytes()),
        Term::Literal { lex, lang, datatype } => KeyInput::Literal {
            lex: lex.as_bytes(),
            lang: lang.map(str::as_bytes),
            datatype: datatype.map(str::as_bytes),
        },
        Term::DirLiteral { .. } | Term::Triple(_) => return rdf12::node_hash(t),
    };
    let mut h = Md5::new();
    key.pieces(|p| h.update(p));
    h.finalize().into()
}

/// What the key of an IRI, blank node or literal (without a direction) is the MD5 of, from
/// a term ([`node_hash`]) or from its stored bytes ([`stored_node_hashes`]).
enum KeyInput<'a> {
    Iri(&'a [u8]),
    Blank(&'a [u8]),
    Literal { lex: &'a [u8], lang: Option<&'a [u8]>, datatype: Option<&'a [u8]> },
}

impl KeyInput<'_> {
    /// Hands `put` the pieces of `lex|lang|datatype|kind`, in order.
    fn pieces(&self, mut put: impl FnMut(&[u8])) {
        match *self {
            KeyInput::Iri(iri) => {
                put(iri);
                put(b"|||uri");
            }
            KeyInput::Blank(label) => {
                put(label);
                put(b"|||bnode");
            }
            KeyInput::Literal { lex, lang, datatype } => {
                put(lex);
                put(b"|");
                if let Some(lang) = lang {
                    put(lang);
                    put(b"||literal");
                } else {
                    put(b"|");
                    if let Some(dt) = datatype {
                        put(dt);
                    }
                    put(b"|literal");
                }
            }
        }
    }
}

pub use crate::langtag::format_lang_tag;

/// Decodes one stored term (for checks and tests). Returns the term's parts and the
/// number of bytes it occupies.
pub fn decode_term(bytes: &[u8]) -> Option<(DecodedTerm, usize)> {
    let mut pos = 0;
    let t = decode_at(bytes, &mut pos, 0)?;
    Some((t, pos))
}

fn varint(b: &[u8], pos: &mut usize) -> Option<u64> {
    let mut n = 0u64;
    let mut shift = 0;
    loop {
        let byte = *b.get(*pos)?;
        *pos += 1;
        n |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(n);
        }
        shift += 7;
        if shift > 63 {
            return None;
        }
    }
}

/// The `nodes` keys of stored terms (bytes as [`encode_term`] writes them), many at once:
/// the MD5 inputs of IRIs, blank nodes and literals are hashed side by side
/// ([`crate::md5x8`]), RDF 1.2 terms one by one. `None` if some bytes are not a stored term.
pub fn stored_node_hashes(stored: &[&[u8]], out: &mut [[u8; 16]]) -> Option<()> {
    let mut inputs = Vec::new();
    let mut spans = Vec::with_capacity(stored.len());
    for (i, b) in stored.iter().enumerate() {
        let start = inputs.len();
        if node_hash_input(b, &mut inputs)? {
            spans.push((i, start..inputs.len()));
        } else {
            out[i] = decode_term(b)?.0.node_hash();
        }
    }
    let messages: Vec<&[u8]> = spans.iter().map(|(_, r)| &inputs[r.clone()]).collect();
    let mut keys = vec![[0u8; 16]; messages.len()];
    crate::md5x8::md5_many(&messages, &mut keys);
    for ((i, _), k) in spans.iter().zip(keys) {
        out[*i] = k;
    }
    Some(())
}

/// Appends what [`node_hash`] hashes for a stored IRI, blank node or literal without a
/// direction; `Some(false)` (nothing appended) for other kinds, `None` for bytes that are
/// not a term.
fn node_hash_input(b: &[u8], out: &mut Vec<u8>) -> Option<bool> {
    let head = *b.first()?;
    if !(1..=3).contains(&(head >> 4)) {
        return Some(false);
    }
    let [_, f1, f2, f3, _, f5] = term_fields(b, &mut 1)?;
    let key = match (head >> 4, f5) {
        (1, None) => KeyInput::Iri(f1?),
        (2, None) => KeyInput::Blank(f1?),
        (3, None) => KeyInput::Literal { lex: f1?, lang: f2, datatype: f3 },
        _ => return Some(false),
    };
    key.pieces(|p| out.extend_from_slice(p));
    Some(true)
}

/// The string fields of a stored term's struct, by field id, up to its STOP byte (read past).
fn term_fields<'a>(b: &'a [u8], pos: &mut usize) -> Option<[Option<&'a [u8]>; 6]> {
    let mut fields: [Option<&[u8]>; 6] = [None; 6];
    let mut field = 0u8;
    loop {
        let h = *b.get(*pos)?;
        *pos += 1;
        if h == 0 {
            return Some(fields);
        }
        field = field.checked_add(h >> 4)?;
        if h & 0x0f != 8 || field as usize >= fields.len() {
            return None;
        }
        let len = varint(b, pos)? as usize;
        fields[field as usize] = Some(b.get(*pos..pos.checked_add(len)?)?);
        *pos += len;
    }
}

fn decode_at(b: &[u8], pos: &mut usize, depth: u32) -> Option<DecodedTerm> {
    if depth > 64 {
        return None;
    }
    let head = *b.get(*pos)?;
    *pos += 1;
    let kind = head >> 4;
    if kind == 9 {
        // RDF_Triple: three RDF_Term fields, then STOP; then the union's STOP.
        if head & 0x0f != 12 {
            return None;
        }
        let mut spo = Vec::with_capacity(3);
        for _ in 0..3 {
            if *b.get(*pos)? != 0x1C {
                return None;
            }
            *pos += 1;
            spo.push(decode_at(b, pos, depth + 1)?);
        }
        if b.get(*pos..*pos + 2)? != [0, 0] {
            return None;
        }
        *pos += 2;
        let spo: [DecodedTerm; 3] = spo.try_into().ok()?;
        return Some(DecodedTerm::Triple(Box::new(spo)));
    }
    let mut fields: [Option<String>; 6] = Default::default();
    for (f, bytes) in fields.iter_mut().zip(term_fields(b, pos)?) {
        if let Some(bytes) = bytes {
            *f = Some(std::str::from_utf8(bytes).ok()?.to_owned());
        }
    }
    if *b.get(*pos)? != 0 {
        return None;
    }
    *pos += 1;
    let [_, f1, f2, f3, _, f5] = fields;
    Some(match (kind, f5) {
        (1, None) => DecodedTerm::Iri(f1?),
        (2, None) => DecodedTerm::Blank(f1?),
        (3, None) => DecodedTerm::Literal { lex: f1?, lang: f2, datatype: f3 },
        (3, Some(dir)) => DecodedTerm::DirLiteral { lex: f1?, lang: f2?, dir },
        _ => return None,
    })
}

/// An owned term decoded from `nodes-data.obj`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DecodedTerm {
    Iri(String),
    Blank(String),
    Literal { lex: String, lang: Option<String>, datatype: Option<String> },
    DirLiteral { lex: String, lang: String, dir: String },
    Triple(Box<[DecodedTerm; 3]>),
}

impl DecodedTerm {
    /// Calls `f` with the borrowed form of this term.
    pub fn with_term<R>(&self, f: &mut dyn FnMut(Term<'_>) -> R) -> R {
        match self {
            DecodedTerm::Iri(s) => f(Term::Iri(s)),
            DecodedTerm::Blank(s) => f(Term::Blank(s)),
            DecodedTerm::Literal { lex, lang, datatype } => {
                f(Term::Literal { lex, lang: lang.as_deref(), datatype: datatype.as_deref() })
            }
            DecodedTerm::DirLiteral { lex, lang, dir } => f(Term::DirLiteral { lex, lang, dir }),
            DecodedTerm::Triple(spo) => spo[0]
                .with_term(&mut |s| spo[1].with_term(&mut |p| spo[2].with_term(&mut |o| f(Term::Triple(&[s, p, o]))))),
        }
    }

    /// The stored bytes of this term.
    pub fn encode(&self, out: &mut Vec<u8>) {
        self.with_term(&mut |t| encode_term(&t, out))
    }

    /// The `nodes` key of this term.
    pub fn node_hash(&self) -> [u8; 16] {
        self.with_term(&mut |t| node_hash(&t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    /// Keys computed from stored bytes, many at once, equal the keys of the terms themselves,
    /// for every kind (RDF 1.2 ones included); bytes that are no term give `None`.
    #[test]
    fn stored_node_hashes_equal_node_hash() {
        let long = "é".repeat(300);
        let inner =
            [Term::Iri("http://s"), Term::Iri("http://p"), Term::Literal { lex: "o", lang: None, datatype: None }];
        let terms = [
            Term::Iri("http://example.org/a"),
            Term::Iri(""),
            Term::Blank("b0"),
            Term::Literal { lex: "hello", lang: None, datatype: None },
            Term::Literal { lex: "", lang: Some("en-GB"), datatype: None },
            Term::Literal { lex: &long, lang: None, datatype: Some("http://www.w3.org/2001/XMLSchema#token") },
            Term::Literal { lex: "12", lang: None, datatype: Some("http://example.org/dt") },
            Term::DirLiteral { lex: "x", lang: "ar", dir: "rtl" },
            Term::Triple(&inner),
        ];
        let stored: Vec<Vec<u8>> = terms
            .iter()
            .cycle()
            .take(40)
            .map(|t| {
                let mut b = Vec::new();
                encode_term(t, &mut b);
                b
            })
            .collect();
        let refs: Vec<&[u8]> = stored.iter().map(Vec::as_slice).collect();
        let mut out = vec![[0u8; 16]; refs.len()];
        stored_node_hashes(&refs, &mut out).unwrap();
        for (t, k) in terms.iter().cycle().zip(&out) {
            assert_eq!(*k, node_hash(t), "{t:?}");
        }
        let mut one = [[0u8; 16]];
        assert!(stored_node_hashes(&[&b"\x1c\x18\x05ab"[..]], &mut one).is_none(), "cut short");
        assert!(stored_node_hashes(&[&b"word"[..]], &mut one).is_none(), "not a term");
    }

    #[test]
    fn thrift_bytes_match_the_spec_examples() {
        let mut out = Vec::new();
        encode_term(&Term::Literal { lex: "hello", lang: None, datatype: None }, &mut out);
        assert_eq!(hex(&out), "3c180568656c6c6f0000");
        out.clear();
        encode_term(&Term::Iri("http://example/s"), &mut out);
        assert_eq!(out[..3], [0x1c, 0x18, 0x10]);
        assert_eq!(&out[3..19], b"http://example/s");
        assert_eq!(out[19..], [0, 0]);
    }

    #[test]
    fn node_hash_is_md5_of_the_joined_parts() {
        let direct: [u8; 16] = Md5::digest(b"http://example/s|||uri").into();
        assert_eq!(node_hash(&Term::Iri("http://example/s")), direct);
        let lit: [u8; 16] = Md5::digest(b"chat|fr||literal").into();
        assert_eq!(node_hash(&Term::Literal { lex: "chat", lang: Some("fr"), datatype: None }), lit);
        let typed: [u8; 16] = Md5::digest(b"x||http://e/dt|literal").into();
        assert_eq!(node_hash(&Term::Literal { lex: "x", lang: None, datatype: Some("http://e/dt") }), typed);
        let simple: [u8; 16] = Md5::digest(b"hello|||literal").into();
        assert_eq!(node_hash(&Term::Literal { lex: "hello", lang: None, datatype: None }), simple);
    }

    #[test]
    fn language_tags_follow_rfc5646_case() {
        let mut s = String::new();
        for (input, want) in [
            ("EN-GB", "en-GB"),
            ("EN-latn-us", "en-Latn-US"),
            ("zh-hant-TW", "zh-Hant-TW"),
            ("en-x-ABCD-GB", "en-x-abcd-gb"),
            ("de-CH-1996", "de-CH-1996"),
            ("sgn-BE-FR", "sgn-BE-FR"),
            // As Jena 5.6.0 stores them (tests/test_term_rules.py asks Jena for more).
            ("x-AB", "x-ab"),
            ("X-abc-DE", "x-abc-de"),
            ("x-AB-abcdefghi", "x-AB-abcdefghi"),
            ("zh-classical", "zh-classical"),
            ("ABCDEFGHI-ab-ABCD", "abcdefghi-AB-Abcd"),
        ] {
            format_lang_tag(input, &mut s);
            assert_eq!(s, want, "{input}");
        }
    }

    #[test]
    fn decode_inverts_encode() {
        let terms = [
            Term::Iri("http://a/é"),
            Term::Blank("b0"),
            Term::Literal { lex: "", lang: None, datatype: None },
            Term::Literal { lex: "x\ny", lang: Some("en-GB"), datatype: None },
            Term::Literal { lex: "1", lang: None, datatype: Some("http://e/dt") },
        ];
        for t in terms {
            let mut out = Vec::new();
            encode_term(&t, &mut out);
            let (d, n) = decode_term(&out).unwrap();
            assert_eq!(n, out.len());
            d.with_term(&mut |back| assert_eq!(back, t));
        }
    }
}

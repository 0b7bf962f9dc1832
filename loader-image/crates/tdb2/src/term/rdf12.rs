//! RDF 1.2 terms as Jena 5.6.0 stores them (docs/tdb2-format.md §4): directional
//! language-tagged strings and triple terms.
//!
//! * Thrift: a directional literal is an `RDF_Literal` with field 5 `baseDirection`
//!   (`3C 18 lex 18 lang 38 dir 00 00`); a triple term is `RDF_Term` field 9, an
//!   `RDF_Triple` struct of three nested `RDF_Term`s (`9C 1C s 1C p 1C o 00 00`), nested
//!   literals in plain form as `tdb2.xloader` writes them (`ThriftConvert.convert(node,
//!   false)`), never the value forms.
//! * Key (`NodeLib.setHash`): a directional literal hashes `lex|lang|rdf:dirLangString|literal`,
//!   **without the direction**, so `"x"@en--ltr` and `"x"@en--rtl` get one key and Jena keeps
//!   whichever it saw first (the loader refuses the second: see the pipeline). A triple term
//!   hashes its N-Triples form as `NodeFmtLib.strNT` writes it, `<<( s p o )>>|||tripleTerm`,
//!   where the direction does count.

use md5::{Digest, Md5};

use super::{put_string, Term};

pub const RDF_DIR_LANG_STRING: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#dirLangString";

/// Thrift bytes of a directional literal or a triple term (other terms: `term::encode_term`).
pub(crate) fn encode_term(t: &Term<'_>, out: &mut Vec<u8>) {
    match *t {
        Term::DirLiteral { lex, lang, dir } => {
            out.push(0x3C);
            put_string(out, 0x18, lex); // field 1: lex
            put_string(out, 0x18, lang); // field 2: langtag
            put_string(out, 0x38, dir); // field 5: baseDirection (delta 3)
            out.extend_from_slice(&[0, 0]);
        }
        Term::Triple(spo) => {
            out.push(0x9C); // field 9: tripleTerm, an RDF_Triple struct
            for t in spo {
                out.push(0x1C); // fields 1, 2, 3: subject, predicate, object (RDF_Term)
                super::encode_term(t, out);
            }
            out.extend_from_slice(&[0, 0]); // end of RDF_Triple, end of RDF_Term
        }
        _ => super::encode_term(t, out),
    }
}

/// The `nodes` key of a directional literal or a triple term.
pub(crate) fn node_hash(t: &Term<'_>) -> [u8; 16] {
    let mut h = Md5::new();
    match *t {
        Term::DirLiteral { lex, lang, .. } => {
            h.update(lex.as_bytes());
            h.update(b"|");
            h.update(lang.as_bytes());
            h.update(b"|");
            h.update(RDF_DIR_LANG_STRING.as_bytes());
            h.update(b"|literal");
        }
        Term::Triple(_) => {
            let mut s = String::new();
            write_nt(t, &mut s);
            h.update(s.as_bytes());
            h.update(b"|||tripleTerm");
        }
        _ => return super::node_hash(t),
    }
    h.finalize().into()
}

/// Appends the term in N-Triples form exactly as Jena's `NodeFormatterNT` writes it
/// (UTF-8 char space): the input of a triple term's key.
pub fn write_nt(t: &Term<'_>, out: &mut String) {
    match *t {
        Term::Iri(iri) => write_iri(iri, out),
        Term::Blank(label) => {
            // NodeFmtLib.encodeBNodeLabel: 'B', then A-Za-z0-9 as is, 'X' as "XX", other
            // UTF-16 units as X + 2 hex digits (< 256) or X + 2 + X + 2.
            out.push_str("_:B");
            let mut units = [0u16; 2];
            for c in label.chars() {
                for &u in c.encode_utf16(&mut units).iter() {
                    if u == u16::from(b'X') {
                        out.push_str("XX");
                    } else if u < 128 && (u as u8).is_ascii_alphanumeric() {
                        out.push(u as u8 as char);
                    } else if u < 256 {
                        out.push_str(&format!("X{u:02X}"));
                    } else {
                        out.push_str(&format!("X{:02X}X{:02X}", u >> 8, u & 0xff));
                    }
                }
            }
        }
        Term::Literal { lex, lang, datatype } => {
            write_string(lex, out);
            if let Some(lang) = lang {
                out.push('@');
                out.push_str(lang);
            } else if let Some(dt) = datatype.filter(|d| *d != super::XSD_STRING) {
                out.push_str("^^");
                write_iri(dt, out);
            }
        }
        Term::DirLiteral { lex, lang, dir } => {
            write_string(lex, out);
            out.push('@');
            out.push_str(lang);
            out.push_str("--");
            out.push_str(dir);
        }
        Term::Triple([s, p, o]) => {
            out.push_str("<<( ");
            write_nt(s, out);
            out.push(' ');
            write_nt(p, out);
            out.push(' ');
            write_nt(o, out);
            out.push_str(" )>>");
        }
    }
}

/// `QuotedURI.writeUnicodeEscapeBadChars`: `\uXXXX` for chars below 20 (decimal, as Jena's
/// `isControlChar` has it), space, `<>"{}|^`\` and DEL; everything else as is.
fn write_iri(iri: &str, out: &mut String) {
    out.push('<');
    for c in iri.chars() {
        if (c as u32) < 20 || matches!(c, ' ' | '<' | '>' | '"' | '{' | '}' | '|' | '^' | '`' | '\\' | '\u{7f}') {
            out.push_str(&format!("\\u{:04X}", c as u32));
        } else {
            out.push(c);
        }
    }
    out.push('>');
}

/// `EscapeStr.stringEsc(..., '"', singleLine = true, UTF8)`.
fn write_string(lex: &str, out: &mut String) {
    out.push('"');
    for c in lex.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{c}' => out.push_str("\\f"),
            '\u{fffd}' => out.push_str("\\uFFFD"),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::term::{decode_term, encode_term, node_hash, DecodedTerm};

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    #[test]
    fn directional_literal_bytes_and_key_leave_out_the_direction_in_the_key() {
        let ltr = Term::DirLiteral { lex: "abc", lang: "en", dir: "ltr" };
        let rtl = Term::DirLiteral { lex: "abc", lang: "en", dir: "rtl" };
        let mut out = Vec::new();
        encode_term(&ltr, &mut out);
        assert_eq!(hex(&out), "3c1803616263180265_6e38036c7472_0000".replace('_', ""));
        let want: [u8; 16] =
            Md5::digest(b"abc|en|http://www.w3.org/1999/02/22-rdf-syntax-ns#dirLangString|literal").into();
        assert_eq!(node_hash(&ltr), want);
        assert_eq!(node_hash(&ltr), node_hash(&rtl), "Jena's key does not cover the direction");
    }

    #[test]
    fn triple_term_bytes_nest_plain_terms_and_key_is_its_n_triples_form() {
        let obj = Term::Literal { lex: "1", lang: None, datatype: Some("http://www.w3.org/2001/XMLSchema#integer") };
        let spo = [Term::Iri("http://e/s"), Term::Iri("http://e/p"), obj];
        let t = Term::Triple(&spo);
        let mut out = Vec::new();
        encode_term(&t, &mut out);
        let mut want = vec![0x9c, 0x1c];
        encode_term(&spo[0], &mut want);
        want.push(0x1c);
        encode_term(&spo[1], &mut want);
        want.push(0x1c);
        encode_term(&spo[2], &mut want);
        want.extend([0, 0]);
        assert_eq!(out, want);
        let nt = "<<( <http://e/s> <http://e/p> \"1\"^^<http://www.w3.org/2001/XMLSchema#integer> )>>";
        let mut s = String::new();
        write_nt(&t, &mut s);
        assert_eq!(s, nt);
        let key: [u8; 16] = Md5::digest(format!("{nt}|||tripleTerm").as_bytes()).into();
        assert_eq!(node_hash(&t), key);
    }

    #[test]
    fn n_triples_form_escapes_as_jena() {
        let inner = [
            Term::Blank("aX-é"),
            Term::Iri("http://e/a b"),
            Term::DirLiteral { lex: "q\"\\\n\t\r\u{c}\u{fffd}\u{8}", lang: "ar", dir: "rtl" },
        ];
        let outer = [Term::Iri("http://e/s"), Term::Iri("http://e/p"), Term::Triple(&inner)];
        let mut s = String::new();
        write_nt(&Term::Triple(&outer), &mut s);
        assert_eq!(
            s,
            "<<( <http://e/s> <http://e/p> <<( _:BaXXX2DXE9 <http://e/a\\u0020b> \"q\\\"\\\\\\n\\t\\r\\f\\uFFFD\u{8}\"@ar--rtl )>> )>>"
        );
    }

    #[test]
    fn decode_inverts_encode_for_nested_terms() {
        let inner = [Term::Blank("b0"), Term::Iri("http://e/p"), Term::DirLiteral { lex: "x", lang: "en", dir: "rtl" }];
        let outer = [Term::Iri("http://e/s"), Term::Iri("http://e/p"), Term::Triple(&inner)];
        let mut out = Vec::new();
        encode_term(&Term::Triple(&outer), &mut out);
        let (d, n) = decode_term(&out).unwrap();
        assert_eq!(n, out.len());
        let DecodedTerm::Triple(spo) = &d else { panic!("{d:?}") };
        assert_eq!(spo[0], DecodedTerm::Iri("http://e/s".into()));
        let DecodedTerm::Triple(inner_d) = &spo[2] else { panic!("{d:?}") };
        assert_eq!(inner_d[2], DecodedTerm::DirLiteral { lex: "x".into(), lang: "en".into(), dir: "rtl".into() });
        let mut again = Vec::new();
        d.encode(&mut again);
        assert_eq!(again, out);
    }
}

//! A fast path for the common Turtle/TriG statement, in the spirit of fastline.rs: one
//! subject (IRI, prefixed name or `_:label`) with its `;`/`,` lists of predicates (IRI,
//! prefixed name, `a`) and objects (IRI, prefixed name, `_:label`, short strings without
//! escapes with an optional language tag or datatype, plain numbers, booleans). It reads a
//! statement unit the scanner of terse.rs cut, with the prefixes in force, into
//! [`FastStatement`]s that borrow the text (prefixed names are expanded into a scratch
//! buffer). Anything else is left to oxttl: the caller then parses the unit as before, so
//! errors and unusual-but-valid input keep exactly oxttl's treatment. As on the N-Triples
//! fast path, IRIs and language tags are validated by the caller, once per new term.

use crate::fastline::{Cursor, FastStatement, TermSlice};

const RDF_TYPE: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type";
const XSD_BOOLEAN: &str = "http://www.w3.org/2001/XMLSchema#boolean";
const XSD_INTEGER: &str = "http://www.w3.org/2001/XMLSchema#integer";
const XSD_DECIMAL: &str = "http://www.w3.org/2001/XMLSchema#decimal";
const XSD_DOUBLE: &str = "http://www.w3.org/2001/XMLSchema#double";

/// Where a term's text is: in the statement, in the scratch buffer, or a constant.
#[derive(Clone, Copy, Debug)]
enum Src {
    Text(usize, usize),
    Expanded(usize, usize),
    Const(&'static str),
}

#[derive(Clone, Copy, Debug)]
enum Raw {
    Iri(Src),
    Blank(Src),
    Literal { lex: Src, lang: Option<Src>, datatype: Option<Src> },
}

/// The statements of the last unit read, kept as offsets (buffers reused from unit to unit).
#[derive(Default)]
pub struct FastTerse {
    expanded: String,
    subject: Option<Raw>,
    pairs: Vec<(Src, Raw)>,
}

/// An IRI that oxttl gives back unchanged when it resolves it against a base: it has a
/// scheme and no dot segment (RFC 3986 removes them even from an absolute IRI). Any `/.`
/// counts as one, to be safe.
fn unchanged_by_resolution(iri: &str) -> bool {
    let b = iri.as_bytes();
    let Some(colon) = memchr::memchr(b':', b) else { return false };
    b[0].is_ascii_alphabetic()
        && b[..colon].iter().all(|c| c.is_ascii_alphanumeric() || b"+-.".contains(c))
        && b.get(colon + 1) != Some(&b'.')
        && memchr::memmem::find(b, b"/.").is_none()
}

struct Reader<'a, 'p> {
    c: Cursor<'a>,
    prefixes: &'p [(String, String)],
    expanded: &'p mut String,
}

impl Reader<'_, '_> {
    /// Blanks and comments. `None`: a comment ends with a CR (a line end to oxttl, not to
    /// the scanner).
    fn skip(&mut self) -> Option<()> {
        let b = self.c.b;
        loop {
            while self.c.i < b.len() && matches!(b[self.c.i], b' ' | b'\t' | b'\n' | b'\r') {
                self.c.i += 1;
            }
            if self.c.peek() != Some(b'#') {
                return Some(());
            }
            let p = memchr::memchr2(b'\n', b'\r', &b[self.c.i..])?;
            if b[self.c.i + p] == b'\r' {
                return None;
            }
            self.c.i += p + 1;
        }
    }

    /// A term ends before a blank or punctuation, never runs into the next one.
    fn delimited(&self) -> Option<()> {
        matches!(self.c.peek(), Some(b' ' | b'\t' | b'\n' | b'\r' | b';' | b',' | b'.')).then_some(())
    }

    fn text(&self, s: &str) -> Src {
        let start = s.as_ptr() as usize - self.c.s.as_ptr() as usize;
        Src::Text(start, start + s.len())
    }

    fn blank(&mut self) -> Option<Src> {
        let label = self.c.blank()?;
        Some(self.text(label))
    }

    fn iriref(&mut self) -> Option<Src> {
        let iri = self.c.iri()?;
        unchanged_by_resolution(iri).then(|| self.text(iri))
    }

    /// `word` at the cursor, followed by a delimiter.
    fn keyword(&mut self, word: &str) -> bool {
        let end = self.c.i + word.len();
        if self.c.s.as_bytes().get(self.c.i..end) == Some(word.as_bytes())
            && matches!(self.c.b.get(end), Some(b' ' | b'\t' | b'\n' | b'\r' | b';' | b',' | b'.'))
        {
            self.c.i = end;
            return true;
        }
        false
    }

    /// A prefixed name (ASCII, no escapes), expanded with the prefix in force.
    fn pname(&mut self) -> Option<Src> {
        let b = self.c.b;
        let start = self.c.i;
        let mut i = start;
        while i < b.len() && (b[i].is_ascii_alphanumeric() || b"_-.".contains(&b[i])) {
            i += 1;
        }
        // PN_PREFIX: a letter first, no dot last
        if b.get(i) != Some(&b':') || (i > start && (!b[start].is_ascii_alphabetic() || b[i - 1] == b'.')) {
            return None;
        }
        let prefix = &self.c.s[start..i];
        i += 1;
        let local_start = i;
        while i < b.len() {
            match b[i] {
                c if c.is_ascii_alphanumeric() || b"_-.:".contains(&c) => i += 1,
                b'%' if b.get(i + 1..i + 3).is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) => i += 3,
                b'%' | b'\\' | 0x80.. => return None, // bad escapes, escapes, non-ASCII: oxttl
                _ => break,
            }
        }
        while i > local_start && b[i - 1] == b'.' {
            i -= 1; // a name cannot end with '.': it is the statement's end
        }
        let local = &self.c.s[local_start..i];
        if local.starts_with(['-', '.']) {
            return None;
        }
        let (_, iri) = self.prefixes.iter().find(|(name, _)| name == prefix)?;
        self.c.i = i;
        let from = self.expanded.len();
        self.expanded.push_str(iri);
        self.expanded.push_str(local);
        Some(Src::Expanded(from, self.expanded.len()))
    }

    /// An IRI, written either way.
    fn iri(&mut self) -> Option<Src> {
        match self.c.peek()? {
            b'<' => self.iriref(),
            _ => self.pname(),
        }
    }

    /// `[+-]?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?`: other forms (`.5`, `1.e3`) go to oxttl.
    fn number(&mut self) -> Option<Raw> {
        let b = self.c.b;
        let start = self.c.i;
        let digits = |i: usize| i + b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
        let mut i = start + usize::from(matches!(b[start], b'+' | b'-'));
        let int_end = digits(i);
        if int_end == i {
            return None;
        }
        i = int_end;
        let mut datatype = XSD_INTEGER;
        if b.get(i) == Some(&b'.') && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
            i = digits(i + 1);
            datatype = XSD_DECIMAL;
        } else if b.get(i) == Some(&b'.') && matches!(b.get(i + 1), Some(b'e' | b'E')) {
            return None;
        }
        if matches!(b.get(i), Some(b'e' | b'E')) {
            let exp = i + 1 + usize::from(matches!(b.get(i + 1), Some(b'+' | b'-')));
            i = digits(exp);
            if i == exp {
                return None;
            }
            datatype = XSD_DOUBLE;
        }
        self.c.i = i;
        let lex = self.text(&self.c.s[start..i]);
        Some(Raw::Literal { lex, lang: None, datatype: Some(Src::Const(datatype)) })
    }

    fn literal(&mut self, q: u8) -> Option<Raw> {
        let lex = self.c.string(q)?;
        let lex = self.text(lex);
        match self.c.peek() {
            Some(b'@') => {
                let lang = self.c.lang()?;
                Some(Raw::Literal { lex, lang: Some(self.text(lang)), datatype: None })
            }
            Some(b'^') if self.c.b.get(self.c.i + 1) == Some(&b'^') => {
                self.c.i += 2;
                Some(Raw::Literal { lex, lang: None, datatype: Some(self.iri()?) })
            }
            _ => Some(Raw::Literal { lex, lang: None, datatype: None }),
        }
    }

    fn subject(&mut self) -> Option<Raw> {
        let t = match self.c.peek()? {
            b'_' => Raw::Blank(self.blank()?),
            _ => Raw::Iri(self.iri()?),
        };
        self.delimited().map(|()| t)
    }

    fn verb(&mut self) -> Option<Src> {
        if self.keyword("a") {
            return Some(Src::Const(RDF_TYPE));
        }
        let p = self.iri()?;
        self.delimited().map(|()| p)
    }

    fn object(&mut self) -> Option<Raw> {
        for (word, lex) in [("true", "true"), ("false", "false")] {
            if self.keyword(word) {
                return Some(Raw::Literal {
                    lex: Src::Const(lex),
                    lang: None,
                    datatype: Some(Src::Const(XSD_BOOLEAN)),
                });
            }
        }
        let t = match self.c.peek()? {
            b'_' => Raw::Blank(self.blank()?),
            q @ (b'"' | b'\'') => self.literal(q)?,
            b'0'..=b'9' | b'+' | b'-' => self.number()?,
            _ => Raw::Iri(self.iri()?),
        };
        self.delimited().map(|()| t)
    }

    /// subject verb object (, object)* (; (verb object (, object)*)?)* .
    fn statement(&mut self, pairs: &mut Vec<(Src, Raw)>) -> Option<Raw> {
        self.skip()?;
        let subject = self.subject()?;
        loop {
            self.skip()?;
            let verb = self.verb()?;
            loop {
                self.skip()?;
                pairs.push((verb, self.object()?));
                self.skip()?;
                if self.c.peek()? != b',' {
                    break;
                }
                self.c.i += 1;
            }
            // a `;` (or several) before the next verb or the end; else the end
            let mut semicolon = false;
            while self.c.peek()? == b';' {
                semicolon = true;
                self.c.i += 1;
                self.skip()?;
            }
            if self.c.peek()? == b'.' {
                break;
            }
            if !semicolon {
                return None;
            }
        }
        // the unit ends with its `.`
        (self.c.i + 1 == self.c.b.len()).then_some(subject)
    }
}

impl FastTerse {
    /// Reads `text`, a statement unit's tokens (from its first to its final `.`), with
    /// `prefixes` in force; false when oxttl must decide.
    pub fn parse(&mut self, text: &str, prefixes: &[(String, String)]) -> bool {
        self.expanded.clear();
        self.pairs.clear();
        let mut r = Reader { c: Cursor::new(text), prefixes, expanded: &mut self.expanded };
        self.subject = r.statement(&mut self.pairs);
        self.subject.is_some()
    }

    /// The statements of the last unit [`Self::parse`] read (`text` is its text again), in
    /// `graph`, in the order oxttl gives them.
    pub fn statements<'a>(&'a self, text: &'a str, graph: Option<TermSlice<'a>>) -> Vec<FastStatement<'a>> {
        let s = |src: Src| -> &'a str {
            match src {
                Src::Text(a, b) => &text[a..b],
                Src::Expanded(a, b) => &self.expanded[a..b],
                Src::Const(c) => c,
            }
        };
        let term = |raw: Raw| match raw {
            Raw::Iri(i) => TermSlice::Iri(s(i)),
            Raw::Blank(b) => TermSlice::Blank(s(b)),
            Raw::Literal { lex, lang, datatype } => {
                TermSlice::Literal { lex: s(lex), lang: lang.map(s), datatype: datatype.map(s) }
            }
        };
        let Some(subject) = self.subject.map(term) else { return Vec::new() };
        self.pairs.iter().map(|&(p, o)| FastStatement { subject, predicate: s(p), object: term(o), graph }).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use TermSlice::*;

    const EX: &str = "http://ex/";

    fn read(text: &str) -> Option<Vec<String>> {
        let mut f = FastTerse::default();
        let prefixes = [("ex".to_string(), EX.to_string()), (String::new(), "http://e/".to_string())];
        f.parse(text, &prefixes).then(|| f.statements(text, None).iter().map(|s| format!("{s:?}")).collect())
    }

    #[test]
    fn common_statements() {
        let text = "ex:s a ex:T ;\n  ex:p \"x y\"@en-GB , 'z' , \"5\"^^ex:int, \"6\"^^<http://d/t> ;\n  # note\n  \
                    :q -1, 2.50, +3E-2, true, false, _:b1, <http://a/o>, ex:o.k, ex:a:b%20c ; .";
        let mut f = FastTerse::default();
        let prefixes = [("ex".to_string(), EX.to_string()), (String::new(), "http://e/".to_string())];
        assert!(f.parse(text, &prefixes));
        let st = f.statements(text, Some(Iri("http://g/")));
        let objects: Vec<_> = st.iter().map(|s| (s.predicate, s.object)).collect();
        let lit = |lex, dt| Literal { lex, lang: None, datatype: Some(dt) };
        assert_eq!(
            objects,
            vec![
                (RDF_TYPE, Iri("http://ex/T")),
                ("http://ex/p", Literal { lex: "x y", lang: Some("en-GB"), datatype: None }),
                ("http://ex/p", Literal { lex: "z", lang: None, datatype: None }),
                ("http://ex/p", lit("5", "http://ex/int")),
                ("http://ex/p", lit("6", "http://d/t")),
                ("http://e/q", lit("-1", XSD_INTEGER)),
                ("http://e/q", lit("2.50", XSD_DECIMAL)),
                ("http://e/q", lit("+3E-2", XSD_DOUBLE)),
                ("http://e/q", lit("true", XSD_BOOLEAN)),
                ("http://e/q", lit("false", XSD_BOOLEAN)),
                ("http://e/q", Blank("b1")),
                ("http://e/q", Iri("http://a/o")),
                ("http://e/q", Iri("http://ex/o.k")),
                ("http://e/q", Iri("http://ex/a:b%20c")),
            ]
        );
        assert!(st.iter().all(|s| s.subject == Iri("http://ex/s") && s.graph == Some(Iri("http://g/"))));
        assert_eq!(read("_:b.c <http://a/p> 7.").unwrap().len(), 1);
        assert!(read(":s :p :o.").is_some());
    }

    #[test]
    fn anything_unusual_is_left_to_oxttl() {
        for text in [
            "ex:s ex:p \"esc\\\"aped\" .",
            "ex:s ex:p \"\"\"long\"\"\" .",
            "ex:s ex:p \"line\nend\" .",
            "ex:s ex:p [ ex:q ex:r ] .",
            "ex:s ex:p ( ex:a ) .",
            "[] ex:p ex:o .",
            "ex:s ex:p <rel> .",
            "ex:s ex:p <http://a/./b> .",
            "ex:s ex:p <http://a/b/../c> .",
            "ex:s ex:p nope:o .",
            "ex:s ex:p ex:a\\.b .",
            "ex:s ex:p ex:é .",
            "ex:s ex:p ex:a%zz .",
            "ex:s ex:p .5 .",
            "ex:s ex:p 1.e3 .",
            "ex:s ex:p 1a .",
            "ex:s ex:p \"x\"@en--ltr .",
            "ex:s ex:p <<( ex:a ex:b ex:c )>> .",
            "ex:s ex:p ex:o {| ex:q ex:r |} .",
            "ex:s ex:p ex:o ~ ex:r .",
            "ex:s ex:p ex:o # c\r ex:q .",
            "ex:s ex:p ex:o",
            "ex:s ex:p ex:o . ex:t ex:p ex:o .",
            "ex:s ex:p ex:o , .",
            "ex:s ex:p ex:o ; ex:q .",
            "ex:s ex:p<http://a/o> .",
            "ex:s ex:p \"x\" \"y\" .",
            "\"lit\" ex:p ex:o .",
            "ex:s a .",
            "ex:s true ex:o .",
            "ex:s ex:p a .",
            "1ex:s ex:p ex:o .",
            "ex.:s ex:p ex:o .",
        ] {
            assert_eq!(read(text), None, "{text}");
        }
    }
}

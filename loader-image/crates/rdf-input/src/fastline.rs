//! A fast path for the common N-Triples/N-Quads line: no escapes, ASCII blank-node labels,
//! plain whitespace. It borrows terms from the line instead of allocating them, and leaves
//! validation that needs a full parser (IRI syntax, language tags) to the caller, who does
//! it once per distinct term. Any line it does not fully understand is `Fallback`: the
//! caller then parses it with oxttl, which decides, so errors and unusual-but-valid lines
//! get exactly oxttl's treatment.

/// A term as it appears in the line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TermSlice<'a> {
    /// Not yet validated as an absolute IRI (may even hold an escape: validation rejects it).
    Iri(&'a str),
    /// A label already checked against the N-Triples BLANK_NODE_LABEL rule (ASCII subset).
    Blank(&'a str),
    /// Lexical form without escapes; `lang` not yet validated, `datatype` IRI not yet validated.
    Literal { lex: &'a str, lang: Option<&'a str>, datatype: Option<&'a str> },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FastStatement<'a> {
    pub subject: TermSlice<'a>,
    pub predicate: &'a str,
    pub object: TermSlice<'a>,
    pub graph: Option<TermSlice<'a>>,
}

#[derive(Debug, PartialEq, Eq)]
pub enum FastLine<'a> {
    /// Blank or comment-only line.
    Empty,
    Statement(FastStatement<'a>),
    /// Let the full parser decide.
    Fallback,
}

/// A position in a statement's text; its term readers are shared with the Turtle fast path
/// (fastterse.rs). Each returns `None` for what the full parser must decide.
pub(crate) struct Cursor<'a> {
    pub(crate) s: &'a str,
    pub(crate) b: &'a [u8],
    pub(crate) i: usize,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(s: &'a str) -> Self {
        Cursor { s, b: s.as_bytes(), i: 0 }
    }
    fn ws(&mut self) {
        while self.i < self.b.len() && (self.b[self.i] == b' ' || self.b[self.i] == b'\t') {
            self.i += 1;
        }
    }
    pub(crate) fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }
    /// The IRI's characters are not checked here: the caller validates every IRI new to
    /// its dictionary with a full IRI parser, which rejects `\\`, spaces and the other
    /// characters IRIREF forbids, and then lets the full parser handle the line.
    pub(crate) fn iri(&mut self) -> Option<&'a str> {
        debug_assert_eq!(self.peek(), Some(b'<'));
        let start = self.i + 1;
        if self.b.get(start) == Some(&b'<') {
            return None; // an RDF 1.2 triple term `<<( s p o )>>`: the full parser
        }
        let end = start + memchr::memchr(b'>', &self.b[start..])?;
        self.i = end + 1;
        Some(&self.s[start..end])
    }
    pub(crate) fn blank(&mut self) -> Option<&'a str> {
        // "_:" (PN_CHARS_U | [0-9]) ((PN_CHARS | '.')* PN_CHARS)?, ASCII only
        if self.b.get(self.i + 1) != Some(&b':') {
            return None;
        }
        let start = self.i + 2;
        let first = *self.b.get(start)?;
        if !(first.is_ascii_alphanumeric() || first == b'_') {
            return None;
        }
        let mut j = start + 1;
        while j < self.b.len() {
            let c = self.b[j];
            if c.is_ascii_alphanumeric() || c == b'_' || c == b'-' || c == b'.' {
                j += 1;
            } else if c >= 0x80 || c == b':' {
                return None; // non-ASCII PN_CHARS: full parser
            } else {
                break;
            }
        }
        while self.b[j - 1] == b'.' {
            j -= 1; // a label cannot end with '.': it is the statement's end
        }
        self.i = j;
        Some(&self.s[start..j])
    }
    /// A short string quoted with `q`, without escapes or line ends; its lexical form.
    pub(crate) fn string(&mut self, q: u8) -> Option<&'a str> {
        let start = self.i + 1;
        let j = start + memchr::memchr3(q, b'\\', b'\r', &self.b[start..])?;
        if self.b[j] != q || memchr::memchr(b'\n', &self.b[start..j]).is_some() {
            return None; // an escape or a raw line end: the full parser decides
        }
        self.i = j + 1;
        Some(&self.s[start..j])
    }
    /// A language tag after its `@`, not yet validated.
    pub(crate) fn lang(&mut self) -> Option<&'a str> {
        let ls = self.i + 1;
        let mut k = ls;
        while k < self.b.len() && (self.b[k].is_ascii_alphanumeric() || self.b[k] == b'-') {
            k += 1;
        }
        if k == ls || memchr::memmem::find(&self.b[ls..k], b"--").is_some() {
            return None; // empty, or an RDF 1.2 base direction (`@en--rtl`): the full parser
        }
        self.i = k;
        Some(&self.s[ls..k])
    }
    fn literal(&mut self) -> Option<TermSlice<'a>> {
        let lex = self.string(b'"')?;
        match self.peek() {
            Some(b'@') => Some(TermSlice::Literal { lex, lang: Some(self.lang()?), datatype: None }),
            Some(b'^') => {
                if self.b.get(self.i + 1) != Some(&b'^') || self.b.get(self.i + 2) != Some(&b'<') {
                    return None;
                }
                self.i += 2;
                let dt = self.iri()?;
                Some(TermSlice::Literal { lex, lang: None, datatype: Some(dt) })
            }
            _ => Some(TermSlice::Literal { lex, lang: None, datatype: None }),
        }
    }
    fn term(&mut self) -> Option<TermSlice<'a>> {
        match self.peek()? {
            b'<' => self.iri().map(TermSlice::Iri),
            b'_' => self.blank().map(TermSlice::Blank),
            b'"' => self.literal(),
            _ => None,
        }
    }
    /// Terms must be separated from what follows by whitespace or the final '.'; this
    /// rejects run-ons like `<a><b>` or `"x"@en<b>` that the full parser may judge
    /// differently.
    fn separated(&self) -> bool {
        matches!(self.peek(), Some(b' ' | b'\t' | b'.'))
    }
    /// Nothing but a comment or a final CR is left. A CR inside a comment ends it (it is a
    /// line end to N-Triples), so what follows is more input: the full parser decides.
    fn at_line_end(&self) -> bool {
        match self.peek() {
            None => true,
            Some(b'#') => memchr::memchr(b'\r', &self.b[self.i..]).is_none_or(|p| self.i + p + 1 == self.b.len()),
            Some(b'\r') => self.i + 1 == self.b.len(),
            _ => false,
        }
    }
}

/// Parses one line (without its `\n`) of N-Triples (`quads = false`) or N-Quads.
pub fn parse_fast_line(line: &str, quads: bool) -> FastLine<'_> {
    let mut c = Cursor::new(line);
    c.ws();
    if c.at_line_end() {
        return FastLine::Empty;
    }
    let stmt = (|| {
        let subject = c.term()?;
        if matches!(subject, TermSlice::Literal { .. }) || !c.separated() {
            return None;
        }
        c.ws();
        if c.peek()? != b'<' {
            return None;
        }
        let predicate = c.iri()?;
        if !c.separated() {
            return None;
        }
        c.ws();
        let object = c.term()?;
        if !c.separated() {
            return None;
        }
        c.ws();
        let mut graph = None;
        if c.peek()? != b'.' {
            if !quads {
                return None;
            }
            let g = c.term()?;
            if matches!(g, TermSlice::Literal { .. }) || !c.separated() {
                return None;
            }
            graph = Some(g);
            c.ws();
        }
        if c.peek()? != b'.' {
            return None;
        }
        c.i += 1;
        c.ws();
        if !c.at_line_end() {
            return None;
        }
        Some(FastStatement { subject, predicate, object, graph })
    })();
    stmt.map_or(FastLine::Fallback, FastLine::Statement)
}

#[cfg(test)]
mod tests {
    use super::*;
    use TermSlice::*;

    fn st(line: &str, quads: bool) -> FastStatement<'_> {
        match parse_fast_line(line, quads) {
            FastLine::Statement(s) => s,
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn common_lines() {
        let s = st("<http://a/s> <http://a/p> \"hi there\"@en-GB .", false);
        assert_eq!(s.subject, Iri("http://a/s"));
        assert_eq!(s.predicate, "http://a/p");
        assert_eq!(s.object, Literal { lex: "hi there", lang: Some("en-GB"), datatype: None });
        let s = st("_:b1 <http://a/p> \"5\"^^<http://www.w3.org/2001/XMLSchema#int>.", false);
        assert_eq!(s.subject, Blank("b1"));
        assert_eq!(s.object, Literal { lex: "5", lang: None, datatype: Some("http://www.w3.org/2001/XMLSchema#int") });
        let s = st("\t<http://a/s>\t<http://a/p> _:x.y _:g1. # comment\r", true);
        assert_eq!(s.object, Blank("x.y"));
        assert_eq!(s.graph, Some(Blank("g1")));
        assert_eq!(parse_fast_line("   # only a comment", false), FastLine::Empty);
        assert_eq!(parse_fast_line("", true), FastLine::Empty);
        assert_eq!(parse_fast_line("# comment\r", true), FastLine::Empty);
    }

    #[test]
    fn anything_unusual_falls_back() {
        for line in [
            "<http://a/s> <http://a/p> \"esc\\\"aped\" .",
            "<http://a/s> <http://a/p> <http://a/o> <http://a/g> .", // a quad in N-Triples
            "<http://a/s> _:p <http://a/o> .",
            "\"lit\" <http://a/p> <http://a/o> .",
            "<http://a/s> <http://a/p> <http://a/o>",
            "<http://a/s> <http://a/p> <http://a/o> . junk",
            "<http://a/s><http://a/p><http://a/o>.",
            "<http://a/s> <http://a/p> \"x\"@ .",
            "<http://a/s> <http://a/p> \"x\"^<http://d> .",
            "_:é <http://a/p> <http://a/o> .",
            "_:-a <http://a/p> <http://a/o> .",
            "<http://a/s> <http://a/p> \"x\" \"y\" .",
            // A CR ends a comment: found by fuzzing (input_lines), oxttl reads on after it.
            "<http://a/s> <http://a/p> <http://a/o> . # c\r\x0c # d",
            "# comment\r<http://a/s> <http://a/p> <http://a/o> .",
            // RDF 1.2: triple terms and base directions are the full parser's.
            "<http://a/s> <http://a/p> <<( <http://a/s> <http://a/p> <http://a/o> )>> .",
            "<http://a/s> <http://a/p> \"x\"@en--rtl .",
            "<http://a/s> <http://a/p> \"x\"@EN--LTR .",
        ] {
            assert_eq!(parse_fast_line(line, line.contains("\"x\" \"y\"")), FastLine::Fallback, "{line}");
        }
    }
}

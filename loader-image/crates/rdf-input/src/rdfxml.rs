//! RDF/XML input: oxrdfxml's parser, with what it leaves out added so that the triples are
//! the ones Jena 5.6.0's RDF/XML parser (RRX, SAX) gives: XML line-end normalisation before
//! parsing, `rdf:parseType="Literal"` values written as Jena writes them, the prefixes of the
//! `rdf:RDF` element, and syntax errors at a line and column.
//!
//! RDF/XML cannot resume after a syntax error (the element nesting is lost), so the first
//! error ends the file: in strict mode it stops the load, in skip mode it is one reject that
//! says the rest of the file was not loaded; the triples before it stay loaded (they are the
//! ones a strict parse emitted before stopping).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::io::{self, Read};

use oxrdf::vocab::rdf;
use oxrdf::{GraphName, Literal, Quad, Term, Triple};
use oxrdfxml::{RdfXmlParseError, RdfXmlParser};
use quick_xml::events::Event;
use quick_xml::name::ResolveResult;
use quick_xml::NsReader;

use crate::rejected::{Position, Rejected};

/// Bytes kept behind the parser for positions and quoting (it reads ahead in blocks).
const RECENT_BYTES: usize = 1 << 20;
/// Bytes kept from the start of the file, where the `rdf:RDF` element is.
const HEAD_BYTES: usize = 256 << 10;
const RDF_NS: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#";

/// What passed through the reader, in the parser's byte offsets: the first bytes, the recent
/// ones, and how many lines ended before the recent window.
#[derive(Default)]
struct Seen {
    head: Vec<u8>,
    recent: VecDeque<u8>,
    recent_start: u64,
    lines_before_recent: u64,
}

impl Seen {
    fn push(&mut self, data: &[u8]) {
        if self.head.len() < HEAD_BYTES {
            let n = (HEAD_BYTES - self.head.len()).min(data.len());
            self.head.extend_from_slice(&data[..n]);
        }
        self.recent.extend(data);
        let excess = self.recent.len().saturating_sub(RECENT_BYTES);
        if excess > 0 {
            let (a, b) = self.recent.as_slices();
            let count = |s: &[u8]| memchr::memchr_iter(b'\n', s).count() as u64;
            let in_a = excess.min(a.len());
            self.lines_before_recent += count(&a[..in_a]) + count(&b[..excess - in_a]);
            self.recent.drain(..excess);
            self.recent_start += excess as u64;
        }
    }

    /// The position of the markup (`<`) the parser was in or had just read when it stopped at
    /// `offset`, with the text of its line; `None` when that is no longer held. (A column on a
    /// line longer than the window counts from the window's start.)
    fn position(&mut self, offset: u64) -> Option<(Position, String)> {
        let start = self.recent_start;
        let all = self.recent.make_contiguous();
        let end = usize::try_from(offset.checked_sub(start)?).ok()?.min(all.len());
        // The parser reports the offset after the event that failed: go back to its `<`.
        let at = all[..end].iter().rposition(|&b| b == b'<').unwrap_or(end.saturating_sub(1));
        let line_start = all[..at].iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
        let line = self.lines_before_recent + memchr::memchr_iter(b'\n', &all[..at]).count() as u64 + 1;
        let column = String::from_utf8_lossy(&all[line_start..at]).chars().count() as u64 + 1;
        let line_end = all[end..].iter().position(|&b| b == b'\n').map_or(all.len(), |p| end + p);
        let text = String::from_utf8_lossy(&all[line_start..line_end]).into_owned();
        Some((Position { line, column }, text))
    }
}

/// Normalises line ends as an XML processor must before parsing (XML 1.0 §2.11: `\r\n` and a
/// lone `\r` become `\n`), which quick-xml leaves to its user; records what passed.
struct XmlInput<R> {
    inner: R,
    seen: std::rc::Rc<std::cell::RefCell<Seen>>,
    /// The previous block ended with `\r` (dropped if a `\n` follows).
    pending_cr: bool,
}

impl<R: Read> Read for XmlInput<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let n = self.inner.read(buf)?;
            if n == 0 {
                return Ok(0);
            }
            let mut w = 0;
            for r in 0..n {
                let b = buf[r];
                let skip = b == b'\n' && self.pending_cr;
                self.pending_cr = b == b'\r';
                if !skip {
                    buf[w] = if b == b'\r' { b'\n' } else { b };
                    w += 1;
                }
            }
            if w > 0 {
                self.seen.borrow_mut().push(&buf[..w]);
                return Ok(w);
            }
        }
    }
}

/// Parses a whole RDF/XML stream into default-graph quads; returns the namespace declarations
/// of the `rdf:RDF` element, in document order (the prefixes Jena records). An I/O error
/// (e.g. corrupt compression) is returned as `Err(Ok(io))`, a callback's error as `Err(Err(e))`.
/// A syntax error goes to `on_reject` and ends the parse (see the module comment).
pub fn parse_rdfxml<E>(
    reader: impl Read,
    base: Option<&str>,
    mut on_quad: impl FnMut(Quad) -> Result<(), E>,
    mut on_reject: impl FnMut(Rejected) -> Result<(), E>,
) -> Result<Vec<(String, String)>, Result<io::Error, E>> {
    let seen = std::rc::Rc::new(std::cell::RefCell::new(Seen::default()));
    let input = XmlInput { inner: reader, seen: seen.clone(), pending_cr: false };
    let mut parser = RdfXmlParser::new();
    if let Some(b) = base {
        parser = parser.with_base_iri(b).map_err(|e| Ok(io::Error::new(io::ErrorKind::InvalidInput, e)))?;
    }
    let mut it = parser.for_reader(input);
    let mut statements = 0u64;
    while let Some(r) = it.next() {
        match r {
            Ok(t) => {
                statements += 1;
                on_quad(jena_triple(t).in_graph(GraphName::DefaultGraph)).map_err(Err)?
            }
            Err(RdfXmlParseError::Io(e)) => return Err(Ok(e)),
            Err(RdfXmlParseError::Syntax(e)) => {
                let offset = it.buffer_position();
                let (position, text) =
                    seen.borrow_mut().position(offset).unwrap_or((Position { line: 1, column: 1 }, String::new()));
                on_reject(Rejected {
                    // The text is the error's line; the reason says the rest of the file went too.
                    start_line: position.line,
                    end_line: position.line,
                    position,
                    message: format!(
                        "{e} (RDF/XML cannot resume after a syntax error: nothing after it in this file \
                         is read; {statements} triples came before it)"
                    ),
                    text,
                })
                .map_err(Err)?;
                break;
            }
        }
    }
    let head = std::mem::take(&mut seen.borrow_mut().head);
    Ok(root_prefixes(&head))
}

/// The triple as Jena's parser gives it: an `rdf:parseType="Literal"` value in Jena's form.
fn jena_triple(mut t: Triple) -> Triple {
    if let Term::Literal(l) = &t.object {
        if l.datatype() == rdf::XML_LITERAL {
            if let Some(lex) = jena_xml_literal(l.value()) {
                t.object = Literal::new_typed_literal(lex, rdf::XML_LITERAL).into();
            }
        }
    }
    t
}

/// An XML literal written as Jena's RRX parser writes `rdf:parseType="Literal"` content
/// (ParserRRX_SAX.xmlLiteral*): each element declares only the namespaces its name and
/// attributes use that an enclosing element of the literal has not declared with the same
/// IRI (`xmlns` entries sorted by attribute name, `xml:` too), then its attributes sorted by
/// qualified name; `&`, `<`, `>` escaped in text and `&`, `<`, `"` in attribute values; empty
/// elements as a start and an end tag. oxrdfxml gives the content with every namespace in
/// scope declared on its top elements, which is enough to resolve each name. `None` when it
/// cannot be read back (then oxrdfxml's form is kept).
pub fn jena_xml_literal(lex: &str) -> Option<String> {
    let mut reader = NsReader::from_str(lex);
    reader.config_mut().expand_empty_elements = true;
    let mut out = String::with_capacity(lex.len());
    let mut scopes: Vec<HashMap<String, String>> = vec![HashMap::new()];
    loop {
        match reader.read_resolved_event().ok()? {
            (ns, Event::Start(e)) => {
                let mut declared = scopes.last().cloned().unwrap_or_default();
                let mut output: BTreeMap<String, String> = BTreeMap::new();
                let qname = std::str::from_utf8(e.name().as_ref()).ok()?.to_string();
                let mut note = |qname: &str, uri: &str, declared: &mut HashMap<String, String>| {
                    let key = match qname.find(':') {
                        Some(i) if i >= 1 => format!("xmlns:{}", &qname[..i]),
                        _ => "xmlns".to_string(),
                    };
                    if declared.get(&key).map(String::as_str) != Some(uri) {
                        declared.insert(key.clone(), uri.to_string());
                        output.insert(key, uri.to_string());
                    }
                };
                note(&qname, &bound_uri(&ns)?, &mut declared);
                let mut attrs: BTreeMap<String, String> = BTreeMap::new();
                // Unchecked: oxrdfxml repeats a top element's own `xmlns` declarations.
                for a in e.attributes().with_checks(false) {
                    let a = a.ok()?;
                    let name = std::str::from_utf8(a.key.as_ref()).ok()?.to_string();
                    if name == "xmlns" || name.starts_with("xmlns:") {
                        continue;
                    }
                    let (ans, _) = reader.resolve_attribute(a.key);
                    let uri = bound_uri(&ans)?;
                    if !uri.is_empty() {
                        note(&name, &uri, &mut declared);
                    }
                    attrs.insert(name, a.unescape_value().ok()?.into_owned());
                }
                out.push('<');
                out.push_str(&qname);
                for (k, v) in &output {
                    if !v.is_empty() {
                        out.push_str(&format!(" {k}=\"{v}\""));
                    }
                }
                for (k, v) in &attrs {
                    out.push_str(&format!(" {k}=\""));
                    escape_into(v, &['&', '<', '"'], &mut out);
                    out.push('"');
                }
                out.push('>');
                scopes.push(declared);
            }
            (_, Event::End(e)) => {
                out.push_str("</");
                out.push_str(std::str::from_utf8(e.name().as_ref()).ok()?);
                out.push('>');
                scopes.pop();
            }
            (_, Event::Text(t)) => escape_into(&t.unescape().ok()?, &['&', '<', '>'], &mut out),
            (_, Event::CData(t)) => escape_into(std::str::from_utf8(&t).ok()?, &['&', '<', '>'], &mut out),
            (_, Event::Eof) => return Some(out),
            _ => return None, // comments, PIs: oxrdfxml does not pass them on
        }
    }
}

fn bound_uri(ns: &ResolveResult<'_>) -> Option<String> {
    match ns {
        ResolveResult::Bound(n) => Some(std::str::from_utf8(n.as_ref()).ok()?.to_string()),
        ResolveResult::Unbound => Some(String::new()),
        ResolveResult::Unknown(_) => None,
    }
}

fn escape_into(s: &str, chars: &[char], out: &mut String) {
    for c in s.chars() {
        match c {
            '&' if chars.contains(&c) => out.push_str("&amp;"),
            '<' if chars.contains(&c) => out.push_str("&lt;"),
            '>' if chars.contains(&c) => out.push_str("&gt;"),
            '"' if chars.contains(&c) => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
}

/// The `xmlns` declarations of the document's `rdf:RDF` element, in order (Jena's parser
/// emits those, and only those, as prefixes); none when the root is another element.
fn root_prefixes(head: &[u8]) -> Vec<(String, String)> {
    let mut reader = NsReader::from_reader(head);
    let mut buf = Vec::new();
    loop {
        match reader.read_resolved_event_into(&mut buf) {
            Ok((ns, Event::Start(e) | Event::Empty(e))) => {
                let is_rdf = matches!(ns, ResolveResult::Bound(n) if n.as_ref() == RDF_NS.as_bytes())
                    && e.local_name().as_ref() == b"RDF";
                if !is_rdf {
                    return Vec::new();
                }
                let mut out = Vec::new();
                for a in e.attributes().flatten() {
                    let key = String::from_utf8_lossy(a.key.as_ref()).into_owned();
                    let prefix = match key.strip_prefix("xmlns") {
                        Some("") => String::new(),
                        Some(p) if p.starts_with(':') => p[1..].to_string(),
                        _ => continue,
                    };
                    if let Ok(v) = a.unescape_value() {
                        out.push((prefix, v.into_owned()));
                    }
                }
                return out;
            }
            Ok((_, Event::Eof)) | Err(_) => return Vec::new(),
            Ok(_) => buf.clear(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(doc: &str) -> (Vec<Quad>, Vec<Rejected>, Vec<(String, String)>) {
        let (mut quads, mut rejects) = (Vec::new(), Vec::new());
        let prefixes = parse_rdfxml::<()>(
            doc.as_bytes(),
            Some("file:///data/x.rdf"),
            |q| {
                quads.push(q);
                Ok(())
            },
            |r| {
                rejects.push(r);
                Ok(())
            },
        )
        .unwrap();
        (quads, rejects, prefixes)
    }

    const HEAD: &str = "<?xml version=\"1.0\"?>\n<rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\"\n  xmlns:ex=\"http://ex/\" xmlns=\"http://default/\">\n";

    #[test]
    fn triples_relative_iris_and_root_prefixes() {
        let doc = format!(
            "{HEAD}<rdf:Description rdf:about=\"a\"><ex:p xml:lang=\"EN-gb\">x\r\ny</ex:p></rdf:Description>\n\
             <rdf:Description rdf:about=\"http://ex/b\" xml:base=\"http://other/dir/\"><ex:q rdf:resource=\"c\"/></rdf:Description>\n</rdf:RDF>\n"
        );
        let (quads, rejects, prefixes) = parse(&doc);
        assert!(rejects.is_empty(), "{rejects:?}");
        let s: Vec<String> = quads.iter().map(|q| q.to_string()).collect();
        assert_eq!(
            s,
            ["<file:///data/a> <http://ex/p> \"x\\ny\"@en-gb", "<http://ex/b> <http://ex/q> <http://other/dir/c>"]
        );
        let names: Vec<(&str, &str)> = prefixes.iter().map(|(p, n)| (p.as_str(), n.as_str())).collect();
        assert_eq!(
            names,
            [("rdf", "http://www.w3.org/1999/02/22-rdf-syntax-ns#"), ("ex", "http://ex/"), ("", "http://default/")]
        );
    }

    #[test]
    fn xml_literals_as_jena_writes_them() {
        let doc = format!(
            "{HEAD}<rdf:Description rdf:about=\"http://ex/a\"><ex:p rdf:parseType=\"Literal\"><ex:b xmlns:ex=\"http://ex/\" z=\"1\" a=\"x&amp;&quot;y\" xml:lang=\"fr\"><c>t &lt; &amp; 'q'</c><ex:e/></ex:b> tail &gt;</ex:p></rdf:Description>\n</rdf:RDF>\n"
        );
        let (quads, rejects, _) = parse(&doc);
        assert!(rejects.is_empty(), "{rejects:?}");
        let Term::Literal(l) = &quads[0].object else { panic!() };
        assert_eq!(l.datatype(), rdf::XML_LITERAL);
        assert_eq!(
            l.value(),
            "<ex:b xmlns:ex=\"http://ex/\" xmlns:xml=\"http://www.w3.org/XML/1998/namespace\" a=\"x&amp;&quot;y\" xml:lang=\"fr\" z=\"1\"><c xmlns=\"http://default/\">t &lt; &amp; 'q'</c><ex:e></ex:e></ex:b> tail &gt;"
        );
    }

    #[test]
    fn a_syntax_error_ends_the_file_at_its_position() {
        let doc = format!(
            "{HEAD}<rdf:Description rdf:about=\"http://ex/a\"><ex:p>1</ex:p></rdf:Description>\n\
             <rdf:Description rdf:about=\"http://ex/b\">\n  <ex:p rdf:resource=\"http://bad iri/\"/>\n</rdf:Description>\n\
             <rdf:Description rdf:about=\"http://ex/c\"><ex:p>3</ex:p></rdf:Description>\n</rdf:RDF>\n"
        );
        let (quads, rejects, _) = parse(&doc);
        assert_eq!(quads.len(), 1);
        assert_eq!(rejects.len(), 1);
        assert_eq!(rejects[0].position, Position { line: 6, column: 3 });
        assert!(rejects[0].message.contains("; 1 triples came before it"), "{}", rejects[0].message);
        assert_eq!(rejects[0].text, "  <ex:p rdf:resource=\"http://bad iri/\"/>");
    }

    #[test]
    fn truncated_documents_are_errors() {
        let doc =
            format!("{HEAD}<rdf:Description rdf:about=\"http://ex/a\"><ex:p>1</ex:p></rdf:Description>\n<rdf:Desc");
        let (quads, rejects, _) = parse(&doc);
        assert_eq!((quads.len(), rejects.len()), (1, 1), "{rejects:?}");
        assert_eq!(rejects[0].position.line, 5);
    }
}

//! oxttl's strict parser refuses what BCP 47 or RFC 3987 refuses; Jena keeps those terms with a
//! warning when the RDF grammar allows them ([`crate::term_rules`]). Rather than give up the
//! strict parser's other checks (oxttl's lenient mode drops several at once), a statement it
//! refuses for such a term is parsed again with the term replaced by a valid placeholder,
//! and the placeholder is replaced by the term in the quads it gives. Only the term the
//! error is about is replaced, one error at a time, so every other error still stands.

use std::ops::Range;

use oxrdf::{Literal, NamedNode, NamedOrBlankNode, Quad, Term};

use crate::term_rules::{judge_iri, lang_tag_grammar, Verdict, WarningKind};

/// Placeholders: a text that holds these anywhere is never rewritten (no placeholder could
/// then be told from the input's own terms).
const IRI_MARK: &str = "urn:x-rdf-bulkload-substitute:";
const LANG_MARK: &str = "x-rdfbulk-";
/// More replacements than this in one statement: the statement is refused.
const MAX_SUBSTITUTIONS: usize = 256;

#[derive(Debug)]
struct Substitution {
    /// Where the placeholder is in the rewritten text, and how long the replaced text was.
    new: Range<usize>,
    old_len: usize,
    placeholder: String,
    original: String,
    kind: WarningKind,
}

/// The replacements made in one statement's text.
#[derive(Debug, Default)]
pub(crate) struct Substitutions {
    subs: Vec<Substitution>,
}

/// Decodes an IRIREF's content (`\u`/`\U` escapes); `None` for any other escape.
fn decode_iriref(raw: &str) -> Option<String> {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let n = match chars.next()? {
            'u' => 4,
            'U' => 8,
            _ => return None,
        };
        let hex: String = chars.by_ref().take(n).collect();
        if hex.len() != n {
            return None;
        }
        out.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
    }
    Some(out)
}

/// The raw prefixed name starting at `text[start..]` (its escapes kept; a final `.` ends the
/// statement, not the name).
fn pname_end(text: &[u8], start: usize) -> usize {
    let mut i = start;
    while i < text.len() {
        match text[i] {
            b'\\' => i += 2,
            b' ' | b'\t' | b'\r' | b'\n' | b'<' | b'>' | b'"' | b'\'' | b'{' | b'}' | b'|' | b'^' | b'`' | b';'
            | b',' | b'(' | b')' | b'[' | b']' | b'#' => break,
            _ => i += 1,
        }
    }
    let mut end = i.min(text.len());
    while end > start && text[end - 1] == b'.' && (end < 2 || text[end - 2] != b'\\') {
        end -= 1;
    }
    end
}

impl Substitutions {
    pub(crate) fn is_empty(&self) -> bool {
        self.subs.is_empty()
    }

    /// The kinds of the terms replaced, with their offsets in the original text.
    #[cfg(test)]
    pub(crate) fn warnings(&self) -> impl Iterator<Item = (WarningKind, usize)> + '_ {
        self.subs.iter().map(|s| (s.kind, self.original_offset(s.new.start)))
    }

    /// The offset in the original text of `offset` in the rewritten one.
    pub(crate) fn original_offset(&self, offset: usize) -> usize {
        let mut shift: isize = 0;
        for s in &self.subs {
            if offset >= s.new.end {
                shift += s.new.len() as isize - s.old_len as isize;
            } else if offset >= s.new.start {
                return (s.new.start as isize - shift) as usize;
            }
        }
        (offset as isize - shift) as usize
    }

    /// After the strict parser refused `text` (the current rewrite) with `message` at byte
    /// `at`: the text with the term the error is about replaced, when Jena's rules keep that
    /// term; `None` when the error stands.
    pub(crate) fn rewrite(&mut self, original: &[u8], text: &[u8], at: usize, message: &str) -> Option<Vec<u8>> {
        if self.subs.len() >= MAX_SUBSTITUTIONS || at > text.len() {
            return None;
        }
        if self.subs.is_empty()
            && (memchr::memmem::find(original, IRI_MARK.as_bytes()).is_some()
                || memchr::memmem::find(original, LANG_MARK.as_bytes()).is_some())
        {
            return None;
        }
        let n = self.subs.len();
        let (range, placeholder, term, kind) = if text.get(at) == Some(&b'<') {
            // An IRIREF: oxiri refused it (or its resolution).
            let end = at + 1 + memchr::memchr(b'>', &text[at + 1..])?;
            let iri = decode_iriref(std::str::from_utf8(&text[at + 1..end]).ok()?)?;
            if judge_iri(&iri) != Verdict::Warn(WarningKind::Iri) {
                return None;
            }
            (at..end + 1, format!("<{IRI_MARK}{n}>"), iri, WarningKind::Iri)
        } else if at >= 2 && text[at - 1] == b'@' && matches!(text[at - 2], b'"' | b'\'') {
            // A language tag (oxttl's error starts after the `@`), maybe with a direction.
            let len = text[at..].iter().take_while(|&&b| b.is_ascii_alphanumeric() || b == b'-').count();
            let written = std::str::from_utf8(&text[at..at + len]).ok()?;
            let tag = written.split_once("--").map_or(written, |(t, _)| t);
            if !lang_tag_grammar(tag) {
                return None;
            }
            (at..at + tag.len(), format!("{LANG_MARK}{n}"), tag.to_string(), WarningKind::LanguageTag)
        } else if let Some(iri) = message
            .split_once(" builds IRI ")
            .and_then(|(_, rest)| rest.rsplit_once(" that is invalid: "))
            .map(|(i, _)| i)
        {
            // A prefixed name whose expansion oxiri refused.
            if judge_iri(iri) != Verdict::Warn(WarningKind::Iri) {
                return None;
            }
            let end = pname_end(text, at);
            if end == at {
                return None;
            }
            (at..end, format!("<{IRI_MARK}{n}>"), iri.to_string(), WarningKind::Iri)
        } else {
            return None;
        };
        let mut out = Vec::with_capacity(text.len() + placeholder.len());
        out.extend_from_slice(&text[..range.start]);
        out.extend_from_slice(placeholder.as_bytes());
        out.extend_from_slice(&text[range.end..]);
        let placeholder = match kind {
            WarningKind::Iri => placeholder[1..placeholder.len() - 1].to_string(),
            WarningKind::LanguageTag => placeholder.clone(),
        };
        let new_len = match kind {
            WarningKind::Iri => placeholder.len() + 2,
            WarningKind::LanguageTag => placeholder.len(),
        };
        // Later replacements come after earlier ones (the parser reads on from the last).
        if self.subs.last().is_some_and(|s| range.start < s.new.end) {
            return None;
        }
        self.subs.push(Substitution {
            new: range.start..range.start + new_len,
            old_len: range.len(),
            placeholder,
            original: term,
            kind,
        });
        Some(out)
    }

    fn iri(&self, n: &NamedNode) -> Option<NamedNode> {
        let s = n.as_str();
        if !s.starts_with(IRI_MARK) {
            return None;
        }
        self.subs
            .iter()
            .find(|x| x.kind == WarningKind::Iri && x.placeholder == s)
            .map(|x| NamedNode::new_unchecked(x.original.clone()))
    }

    fn lang(&self, tag: &str) -> Option<&str> {
        self.subs
            .iter()
            .find(|x| x.kind == WarningKind::LanguageTag && x.placeholder == tag)
            .map(|x| x.original.as_str())
    }

    fn term(&self, t: &mut Term) {
        match t {
            Term::NamedNode(n) => {
                if let Some(r) = self.iri(n) {
                    *n = r;
                }
            }
            Term::Literal(l) => {
                let value = l.value().to_string();
                #[allow(unreachable_patterns)]
                let restored = if let Some(tag) = l.language() {
                    self.lang(tag).map(|orig| match l.direction() {
                        Some(dir) => Literal::new_directional_language_tagged_literal_unchecked(value, orig, dir),
                        None => Literal::new_language_tagged_literal_unchecked(value, orig),
                    })
                } else {
                    self.iri(&l.datatype().into_owned()).map(|dt| Literal::new_typed_literal(value, dt))
                };
                if let Some(r) = restored {
                    *l = r;
                }
            }
            Term::Triple(tr) => {
                let tr = tr.as_mut();
                if let NamedOrBlankNode::NamedNode(n) = &mut tr.subject {
                    if let Some(r) = self.iri(n) {
                        *n = r;
                    }
                }
                if let Some(r) = self.iri(&tr.predicate) {
                    tr.predicate = r;
                }
                self.term(&mut tr.object);
            }
            _ => {}
        }
    }

    /// The quad with every placeholder replaced by the term it stands for.
    pub(crate) fn restore(&self, mut q: Quad) -> Quad {
        if self.subs.is_empty() {
            return q;
        }
        if let NamedOrBlankNode::NamedNode(n) = &mut q.subject {
            if let Some(r) = self.iri(n) {
                *n = r;
            }
        }
        if let Some(r) = self.iri(&q.predicate) {
            q.predicate = r;
        }
        self.term(&mut q.object);
        if let oxrdf::GraphName::NamedNode(n) = &mut q.graph_name {
            if let Some(r) = self.iri(n) {
                *n = r;
            }
        }
        q
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_map_back() {
        let original = b"<http://a/%> <http://p> \"x\"@zh-classical .";
        let mut s = Substitutions::default();
        let t1 = s.rewrite(original, original, 0, "bad").unwrap();
        let at = t1.iter().position(|&b| b == b'@').unwrap() + 1;
        let t2 = s.rewrite(original, &t1, at, "bad").unwrap();
        let text = String::from_utf8(t2.clone()).unwrap();
        assert!(text.contains(IRI_MARK) && text.contains("@x-rdfbulk-1 ."), "{text}");
        assert_eq!(s.original_offset(t2.len() - 1), original.len() - 1);
        assert_eq!(s.original_offset(1), 0);
        let kinds: Vec<_> = s.warnings().collect();
        assert_eq!(kinds, vec![(WarningKind::Iri, 0), (WarningKind::LanguageTag, 28)]);
    }

    #[test]
    fn errors_that_stand() {
        let mut s = Substitutions::default();
        for (text, at) in [
            (&b"<http://a b> <p> <o> ."[..], 0),    // a space: the grammar refuses it
            (b"<rel%> <http://p> <http://o> .", 0), // relative
            (b"<http://s> <http://p> \"x\"@en_gb .", 27),
            (b"<http://s> <http://p> \"x\"@en .", 27), // a valid tag: not the error
        ] {
            assert!(s.rewrite(text, text, at, "x").is_none(), "{}", String::from_utf8_lossy(text));
        }
        let marked = format!("<http://a/%> <{IRI_MARK}0> <http://o> .");
        assert!(s.rewrite(marked.as_bytes(), marked.as_bytes(), 0, "x").is_none());
    }
}

//! Terms kept with a warning (rdf_input::term_rules: language tags BCP 47 refuses, IRIs RFC
//! 3987 refuses, which the RDF grammars and Jena's parsers accept): counted per kind, one per
//! statement and position holding such a term, with the first few occurrences of each kind
//! as examples (input order), so that a dump with millions of them neither floods the log
//! nor hides them.

use std::collections::BTreeMap;

use rdf_input::term_rules::{judge_iri, lang_tag_grammar, Verdict, WarningKind};
use serde::{Deserialize, Serialize};

/// Examples kept per kind.
pub(crate) const EXAMPLES_PER_KIND: usize = 5;

/// The report's `warnings` and `warning_examples` (docs/fidelity.md).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Warnings {
    /// Occurrences per kind ([`WarningKind::name`]).
    pub counts: BTreeMap<String, u64>,
    /// The first [`EXAMPLES_PER_KIND`] occurrences of each kind, in input order.
    pub examples: Vec<WarningExample>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WarningExample {
    pub kind: String,
    /// Index of the input (report `inputs`) and its path.
    pub input: usize,
    pub file: String,
    /// 1-based; 0 when the position is not known (an input parsed whole).
    pub line: u64,
    pub column: u64,
    /// The language tag or IRI, as written.
    pub term: String,
}

impl WarningExample {
    fn order(&self) -> (usize, u64, u64) {
        (self.input, self.line, self.column)
    }
}

impl Warnings {
    pub fn total(&self) -> u64 {
        self.counts.values().sum()
    }

    /// Adds `other`'s counts and examples, keeping the first examples of each kind.
    pub fn merge(&mut self, other: &Warnings) {
        for (k, n) in &other.counts {
            *self.counts.entry(k.clone()).or_default() += n;
        }
        self.examples.extend(other.examples.iter().cloned());
        self.examples.sort_by(|a, b| a.order().cmp(&b.order()).then_with(|| a.kind.cmp(&b.kind)));
        self.examples.dedup();
        let mut seen: BTreeMap<String, usize> = BTreeMap::new();
        self.examples.retain(|e| {
            let n = seen.entry(e.kind.clone()).or_default();
            *n += 1;
            *n <= EXAMPLES_PER_KIND
        });
    }

    /// `file:line:column: what` lines for the log, then one line of counts.
    pub fn log_lines(&self) -> Vec<String> {
        let mut lines: Vec<String> = self
            .examples
            .iter()
            .map(|e| {
                let what = match WarningKind::from_name(&e.kind) {
                    Some(WarningKind::LanguageTag) => "language tag not valid BCP 47 (kept, as Jena does)",
                    Some(WarningKind::Iri) => "IRI not valid RFC 3987 (kept as written, as Jena does)",
                    None => "warning",
                };
                let at = if e.line == 0 { e.file.clone() } else { format!("{}:{}:{}", e.file, e.line, e.column) };
                format!("warning: {at}: {what}: {}", e.term)
            })
            .collect();
        if !self.counts.is_empty() {
            let counts: Vec<String> = self.counts.iter().map(|(k, n)| format!("{k} {n}")).collect();
            lines.push(format!(
                "warnings: {} (first {EXAMPLES_PER_KIND} of each kind shown; all in the report)",
                counts.join(", ")
            ));
        }
        lines
    }
}

/// The warnings of a worker's current job: counts, and the first terms of each kind still
/// to be given a position.
#[derive(Default)]
pub struct Tally {
    pub counts: [u64; 2],
    pub pending: Vec<(WarningKind, String)>,
}

fn index(kind: WarningKind) -> usize {
    match kind {
        WarningKind::LanguageTag => 0,
        WarningKind::Iri => 1,
    }
}

impl Tally {
    pub fn add(&mut self, kind: WarningKind, term: &str) {
        self.counts[index(kind)] += 1;
        if self.counts[index(kind)] <= EXAMPLES_PER_KIND as u64 {
            self.pending.push((kind, term.to_string()));
        }
    }

    /// Moves the counts into `w` (the examples are the caller's to place).
    pub fn drain_counts(&mut self, w: &mut Warnings) {
        for kind in WarningKind::ALL {
            let n = std::mem::take(&mut self.counts[index(kind)]);
            if n > 0 {
                *w.counts.entry(kind.name().to_string()).or_default() += n;
            }
        }
    }
}

/// The warning a term's IRI or language tag earns; `Err` when the grammar refuses it.
pub(crate) fn iri_warning(iri: &str) -> Result<Option<WarningKind>, ()> {
    match judge_iri(iri) {
        Verdict::Valid => Ok(None),
        Verdict::Warn(k) => Ok(Some(k)),
        Verdict::Refused(_) => Err(()),
    }
}

/// A language tag: Jena warns where its own RFC 5646 parser refuses the tag (tdb2::langtag).
pub(crate) fn lang_warning(tag: &str) -> Result<Option<WarningKind>, ()> {
    if !lang_tag_grammar(tag) {
        return Err(());
    }
    Ok((!tdb2::langtag::jena_valid(tag)).then_some(WarningKind::LanguageTag))
}

/// Column (1-based, in characters) where `term` (of `kind`) is written in `text`, searched
/// from byte `from`: the `@` of a language tag, the `<` of an IRI (or, for an IRI written
/// as a prefixed name, the start of its local part). The byte offset found, if any.
pub fn find_term(text: &str, from: usize, kind: WarningKind, term: &str) -> Option<usize> {
    let hay = text.get(from..)?;
    let found = match kind {
        // The tag may have been formatted already (Jena's case): ASCII case-blind.
        WarningKind::LanguageTag => hay.to_ascii_lowercase().find(&format!("@{}", term.to_ascii_lowercase())),
        WarningKind::Iri => hay.find(&format!("<{term}>")).or_else(|| {
            let local = term.rsplit(['/', '#', ':']).next().filter(|l| !l.is_empty())?;
            hay.find(&format!(":{local}")).map(|p| p + 1)
        }),
    };
    found.map(|p| p + from)
}

/// The term as written at `off` (where [`find_term`] found it): a language tag in its
/// written case.
pub fn written_term(text: &str, off: usize, kind: WarningKind, term: String) -> String {
    match kind {
        WarningKind::LanguageTag => text.get(off + 1..off + 1 + term.len()).map_or(term, str::to_string),
        WarningKind::Iri => term,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ex(kind: WarningKind, input: usize, line: u64) -> WarningExample {
        WarningExample { kind: kind.name().into(), input, file: format!("f{input}"), line, column: 1, term: "t".into() }
    }

    #[test]
    fn merge_keeps_the_first_examples_of_each_kind_and_adds_counts() {
        let mut a = Warnings::default();
        a.counts.insert("iri-not-rfc3987".into(), 3);
        a.examples = (10..16).map(|l| ex(WarningKind::Iri, 1, l)).collect();
        let mut b = Warnings::default();
        b.counts.insert("iri-not-rfc3987".into(), 2);
        b.counts.insert("language-tag-not-bcp47".into(), 1);
        b.examples = vec![ex(WarningKind::Iri, 0, 99), ex(WarningKind::LanguageTag, 2, 1)];
        a.merge(&b);
        assert_eq!(a.counts["iri-not-rfc3987"], 5);
        assert_eq!(a.total(), 6);
        let iris: Vec<_> =
            a.examples.iter().filter(|e| e.kind == "iri-not-rfc3987").map(|e| (e.input, e.line)).collect();
        assert_eq!(iris, vec![(0, 99), (1, 10), (1, 11), (1, 12), (1, 13)]);
        assert_eq!(a.examples.len(), 6);
        assert!(a.log_lines().last().unwrap().contains("iri-not-rfc3987 5, language-tag-not-bcp47 1"));
    }

    #[test]
    fn terms_are_found_where_written() {
        let line = "<http://a/%> <http://p> \"x\"@zh-classical .";
        assert_eq!(find_term(line, 0, WarningKind::Iri, "http://a/%"), Some(0));
        assert_eq!(find_term(line, 0, WarningKind::LanguageTag, "zh-classical"), Some(27));
        let shouted = "<http://a> <http://p> 'x'@ZH-Classical .";
        let at = find_term(shouted, 0, WarningKind::LanguageTag, "zh-classical").unwrap();
        assert_eq!(written_term(shouted, at, WarningKind::LanguageTag, "zh-classical".into()), "ZH-Classical");
        assert_eq!(find_term("ex:a ex:b wd:Q1%x .", 0, WarningKind::Iri, "http://w/Q1%x"), Some(13));
    }
}

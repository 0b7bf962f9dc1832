//! Helpers shared by the fuzz targets: the model side of each differential check.

pub mod tree_model;

use rdf_input::fastline::{FastStatement, TermSlice};
use rdf_input::oxrdf::{BlankNode, GraphName, Literal, NamedNode, NamedOrBlankNode, Quad, Term};

const RDF_LANG_STRING: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString";
const RDF_DIR_LANG_STRING: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#dirLangString";

/// The checks the pipeline runs on a fast-path term before trusting it (a copy of
/// `valid` in crates/storage/src/encode.rs, which is private there): IRIs with oxiri,
/// language tags with oxilangtag, no rdf:langString/dirLangString datatype. A fast-path
/// statement that fails them goes to the full parser instead.
pub fn fast_term_valid(t: &TermSlice<'_>) -> bool {
    match *t {
        TermSlice::Iri(iri) => oxiri::Iri::parse(iri).is_ok(),
        TermSlice::Blank(_) => true,
        TermSlice::Literal { lang: Some(lang), .. } => oxilangtag::LanguageTag::parse(lang).is_ok(),
        TermSlice::Literal { datatype: Some(dt), .. } => {
            dt != RDF_LANG_STRING && dt != RDF_DIR_LANG_STRING && oxiri::Iri::parse(dt).is_ok()
        }
        TermSlice::Literal { .. } => true,
    }
}

/// Whether the pipeline would take this fast-path statement as it is.
pub fn fast_statement_valid(st: &FastStatement<'_>) -> bool {
    [Some(st.subject), Some(TermSlice::Iri(st.predicate)), Some(st.object), st.graph]
        .iter()
        .flatten()
        .all(fast_term_valid)
}

fn term(t: &TermSlice<'_>) -> Term {
    match *t {
        TermSlice::Iri(iri) => NamedNode::new_unchecked(iri).into(),
        TermSlice::Blank(label) => BlankNode::new_unchecked(label).into(),
        TermSlice::Literal { lex, lang: Some(lang), .. } => {
            // Lower-cased as every RDF parser does; the tag was checked by fast_term_valid.
            Literal::new_language_tagged_literal(lex, lang).expect("a checked language tag").into()
        }
        TermSlice::Literal { lex, lang: None, datatype: Some(dt) } => {
            Literal::new_typed_literal(lex, NamedNode::new_unchecked(dt)).into()
        }
        TermSlice::Literal { lex, lang: None, datatype: None } => Literal::new_simple_literal(lex).into(),
    }
}

/// The quad a checked fast-path statement stands for, built with oxrdf's own constructors
/// (so xsd:string and language-tag case are normalized as the full parser does).
pub fn fast_statement_quad(st: &FastStatement<'_>) -> Quad {
    let subject = match term(&st.subject) {
        Term::NamedNode(n) => NamedOrBlankNode::NamedNode(n),
        Term::BlankNode(b) => NamedOrBlankNode::BlankNode(b),
        other => panic!("the fast path gave a literal subject: {other}"),
    };
    let graph = match st.graph.as_ref().map(term) {
        None => GraphName::DefaultGraph,
        Some(Term::NamedNode(n)) => GraphName::NamedNode(n),
        Some(Term::BlankNode(b)) => GraphName::BlankNode(b),
        Some(other) => panic!("the fast path gave a literal graph name: {other}"),
    };
    Quad::new(subject, NamedNode::new_unchecked(st.predicate), term(&st.object), graph)
}

/// SplitMix64: a tiny deterministic generator, so that an input's bytes fully decide a run.
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform-ish in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

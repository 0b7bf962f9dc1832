//! From parsed terms to tuple columns: inline NodeIds by Jena's rules, everything else
//! interned in the dictionary under its exact stored (Thrift) bytes.

use std::collections::HashMap;
use std::io;

use md5::{Digest, Md5};
use rdf_input::fastline::{FastStatement, TermSlice};
use rdf_input::oxrdf::{GraphName, NamedOrBlankNode, Quad, Term as RdfTerm};
use tdb2::term::{encode_term, format_lang_tag, Term, XSD_STRING};
use tdb2_nodeid::JenaVersion;

use crate::dict::Dictionary;
use crate::warnings::{iri_warning, lang_warning, Tally};
use rdf_input::term_rules::WarningKind;

/// Graph names that N-Quads/TriG use for the default graph (Jena puts these in the triple
/// table).
const DEFAULT_GRAPH_IRIS: [&str; 2] = ["urn:x-arq:DefaultGraph", "urn:x-arq:DefaultGraphNode"];
/// The graph Jena's parsers give a statement of a quad syntax (N-Quads, TriG) written
/// without a graph. `tdb2.xloader` stores it in the node table, and so do we, so that the
/// node tables hold the same records.
const DEFAULT_GRAPH_NODE: &str = "urn:x-arq:DefaultGraphNode";

/// One encoded statement.
#[derive(Clone, Copy)]
pub enum Encoded {
    Triple([u64; 3]),
    /// (G, S, P, O)
    Quad([u64; 4]),
}

/// How blank-node labels are made deterministic for one input file. Jena scopes labels to
/// one parser run (one file) and draws random ones; we derive them from the file's place in
/// the load instead, so the same inputs give the same bytes. One kind per
/// `rdf_input::BlankLabels`.
pub enum BlankScope {
    /// Labels are stable (N-Triples/N-Quads as written; Turtle/TriG as rdf_input names the
    /// nodes its parser invents, after their place in the file): hash them with the scope.
    Labels { scope: String },
    /// RDF/XML: the parser invents labels for nodes without one, so every label is
    /// renumbered in order of first appearance (the parse is sequential).
    FirstSeen { scope: String, seen: HashMap<String, u64> },
}

impl BlankScope {
    pub fn label(&mut self, raw: &str, out: &mut String) {
        let mut h = Md5::new();
        match self {
            BlankScope::Labels { scope } => {
                h.update(scope.as_bytes());
                h.update(b"\0l\0");
                h.update(raw.as_bytes());
            }
            BlankScope::FirstSeen { scope, seen } => {
                let next = seen.len() as u64;
                let n = *seen.entry(raw.to_string()).or_insert(next);
                h.update(scope.as_bytes());
                h.update(b"\0n\0");
                h.update(n.to_le_bytes());
            }
        }
        out.clear();
        for b in h.finalize() {
            use std::fmt::Write;
            let _ = write!(out, "{b:02x}");
        }
    }
}

/// Per-thread encoder with reusable buffers.
pub struct Encoder<'d> {
    dict: &'d Dictionary,
    /// Whose inline rules (docs/tdb2-format.md §12).
    jena: JenaVersion,
    bytes: Vec<u8>,
    lang: String,
    label: String,
    /// Terms seen recently (a Turtle subject repeats along its `;` list), as the fast path
    /// keeps them: a hit takes no lock.
    cache: Vec<CachedTerm>,
    /// Warnings of the terms encoded (crate::warnings).
    pub tally: Tally,
}

/// The warning a stored term earns (its IRI, language tag or datatype), judged once per
/// cache miss. Terms the full parser gave are grammatical: a refusal cannot come.
fn term_warning(t: &Term<'_>) -> Option<WarningKind> {
    match *t {
        Term::Iri(iri) => iri_warning(iri).ok().flatten(),
        Term::Literal { lang: Some(lang), .. } | Term::DirLiteral { lang, .. } => lang_warning(lang).ok().flatten(),
        Term::Literal { datatype: Some(dt), .. } => iri_warning(dt).ok().flatten(),
        _ => None,
    }
}

/// What an example shows of a term: the IRI or the language tag.
fn warned_text<'a>(t: &Term<'a>) -> &'a str {
    match *t {
        Term::Iri(iri) => iri,
        Term::Literal { lang: Some(lang), .. } | Term::DirLiteral { lang, .. } => lang,
        Term::Literal { datatype: Some(dt), .. } => dt,
        _ => "",
    }
}

impl<'d> Encoder<'d> {
    pub fn new(dict: &'d Dictionary, jena: JenaVersion) -> Self {
        Encoder {
            dict,
            jena,
            bytes: Vec::with_capacity(256),
            lang: String::new(),
            label: String::new(),
            cache: (0..CACHE_SLOTS).map(|_| CachedTerm::default()).collect(),
            tally: Tally::default(),
        }
    }

    pub(crate) fn intern(&mut self, t: Term<'_>) -> io::Result<u64> {
        self.bytes.clear();
        encode_term(&t, &mut self.bytes);
        let hash = self.dict.hash(&self.bytes);
        let cached = &mut self.cache[(hash as usize) % CACHE_SLOTS];
        if cached.hash == hash && cached.bytes == self.bytes {
            if let Some(kind) = cached.warn {
                self.tally.add(kind, warned_text(&t));
            }
            return Ok(cached.id);
        }
        let warn = term_warning(&t);
        if let Some(kind) = warn {
            self.tally.add(kind, warned_text(&t));
        }
        let id = self.dict.intern_hashed(&self.bytes, hash)?;
        let cached = &mut self.cache[(hash as usize) % CACHE_SLOTS];
        cached.hash = hash;
        cached.id = id;
        cached.warn = warn;
        cached.bytes.clear();
        cached.bytes.extend_from_slice(&self.bytes);
        Ok(id)
    }

    fn iri(&mut self, iri: &str) -> io::Result<u64> {
        self.intern(Term::Iri(iri))
    }

    fn blank(&mut self, raw: &str, scope: &mut BlankScope) -> io::Result<u64> {
        let mut label = std::mem::take(&mut self.label);
        scope.label(raw, &mut label);
        let id = self.intern(Term::Blank(&label));
        self.label = label;
        id
    }

    fn subject(&mut self, s: &NamedOrBlankNode, scope: &mut BlankScope) -> io::Result<u64> {
        match s {
            NamedOrBlankNode::NamedNode(n) => self.iri(n.as_str()),
            NamedOrBlankNode::BlankNode(b) => self.blank(b.as_str(), scope),
        }
    }

    fn object(&mut self, o: &RdfTerm, scope: &mut BlankScope) -> io::Result<u64> {
        match o {
            RdfTerm::NamedNode(n) => self.iri(n.as_str()),
            RdfTerm::BlankNode(b) => self.blank(b.as_str(), scope),
            RdfTerm::Triple(t) => self.triple_term(t, scope),
            RdfTerm::Literal(l) => {
                let lex = l.value();
                if let (Some(lang), Some(dir)) = (l.language(), l.direction()) {
                    return self.directional(lex, lang, dir);
                }
                if let Some(lang) = l.language() {
                    let mut formatted = std::mem::take(&mut self.lang);
                    format_lang_tag(lang, &mut formatted);
                    let id = self.intern(Term::Literal { lex, lang: Some(&formatted), datatype: None });
                    self.lang = formatted;
                    return id;
                }
                let dt = l.datatype().as_str();
                if dt == XSD_STRING {
                    return self.intern(Term::Literal { lex, lang: None, datatype: None });
                }
                if let Some(id) = self.jena.inline_literal(lex, dt) {
                    return Ok(id.0);
                }
                self.intern(Term::Literal { lex, lang: None, datatype: Some(dt) })
            }
        }
    }

    /// Encodes a statement; default-graph quads become triples. `quad_syntax`: the file's
    /// syntax has graphs (`Syntax::has_graphs`: N-Quads, TriG; see [`DEFAULT_GRAPH_NODE`]).
    pub fn quad(&mut self, q: &Quad, scope: &mut BlankScope, quad_syntax: bool) -> io::Result<Encoded> {
        let s = self.subject(&q.subject, scope)?;
        let p = self.iri(q.predicate.as_str())?;
        let o = self.object(&q.object, scope)?;
        let g = match &q.graph_name {
            GraphName::DefaultGraph => {
                if quad_syntax {
                    self.iri(DEFAULT_GRAPH_NODE)?;
                }
                None
            }
            GraphName::NamedNode(n) if DEFAULT_GRAPH_IRIS.contains(&n.as_str()) => {
                self.iri(n.as_str())?;
                None
            }
            GraphName::NamedNode(n) => Some(self.iri(n.as_str())?),
            GraphName::BlankNode(b) => Some(self.blank(b.as_str(), scope)?),
        };
        Ok(match g {
            None => Encoded::Triple([s, p, o]),
            Some(g) => Encoded::Quad([g, s, p, o]),
        })
    }
}

const RDF_LANG_STRING: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString";
const RDF_DIR_LANG_STRING: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#dirLangString";

/// Per-position scratch space of the fast path.
#[derive(Default)]
struct Slot {
    bytes: Vec<u8>,
    /// Formatted language tag or derived blank-node label.
    text: String,
    hash: u64,
    id: u64,
    stored: bool,
    miss: bool,
    /// The previous statement's term in this place, taken as it is (a Turtle subject).
    same: bool,
    /// The warning the term earns, or that the grammar refuses it (the full parser then
    /// decides the statement).
    warn: Option<WarningKind>,
    refused: bool,
}

/// Entries of the per-worker cache of recently seen terms.
const CACHE_SLOTS: usize = 1024;

/// A term this worker saw recently: its stored bytes and provisional id. Ids stay valid
/// for the whole load (also after the term's shard spilled), so a hit needs no lock.
#[derive(Default)]
struct CachedTerm {
    hash: u64,
    id: u64,
    bytes: Vec<u8>,
    warn: Option<WarningKind>,
}

/// The fast path: terms borrowed from the line, validated only when new to the dictionary.
pub struct FastEncoder<'d> {
    dict: &'d Dictionary,
    /// Whose inline rules (docs/tdb2-format.md §12).
    jena: JenaVersion,
    /// Four per statement: subject, predicate, object, graph.
    slots: Vec<Slot>,
    cache: Vec<CachedTerm>,
    encoded: Vec<Encoded>,
    /// Warnings of the statements encoded (crate::warnings).
    pub tally: Tally,
}

fn slot_term<'a>(t: &TermSlice<'a>, text: &'a str) -> Term<'a> {
    match *t {
        TermSlice::Iri(iri) => Term::Iri(iri),
        TermSlice::Blank(_) => Term::Blank(text),
        TermSlice::Literal { lex, lang: Some(_), .. } => Term::Literal { lex, lang: Some(text), datatype: None },
        TermSlice::Literal { lex, lang: None, datatype } => {
            Term::Literal { lex, lang: None, datatype: datatype.filter(|d| *d != XSD_STRING) }
        }
    }
}

/// The IRI and language-tag rules (crate::warnings), for a term the worker's cache does
/// not hold: `Err` when the grammar refuses it.
fn judge(t: &TermSlice<'_>) -> Result<Option<WarningKind>, ()> {
    match *t {
        TermSlice::Iri(iri) => iri_warning(iri),
        TermSlice::Blank(_) => Ok(None), // the line scanner checked the label
        TermSlice::Literal { lang: Some(lang), .. } => lang_warning(lang),
        TermSlice::Literal { datatype: Some(dt), .. } => iri_warning(dt),
        TermSlice::Literal { .. } => Ok(None),
    }
}

/// What an example shows of a term: the IRI or the language tag.
fn slice_text<'a>(t: &TermSlice<'a>) -> &'a str {
    match *t {
        TermSlice::Iri(iri) => iri,
        TermSlice::Literal { lang: Some(lang), .. } => lang,
        TermSlice::Literal { datatype: Some(dt), .. } => dt,
        _ => "",
    }
}

/// The rest of what the full parser would check, for a term seen for the first time.
fn valid(t: &TermSlice<'_>) -> bool {
    match *t {
        TermSlice::Literal { lex, lang: None, datatype: Some(dt) } => {
            dt != RDF_LANG_STRING && dt != RDF_DIR_LANG_STRING && crate::unreadable::readable(lex, dt)
        }
        _ => true,
    }
}

impl<'d> FastEncoder<'d> {
    pub fn new(dict: &'d Dictionary, jena: JenaVersion) -> Self {
        FastEncoder {
            dict,
            jena,
            slots: Vec::new(),
            cache: (0..CACHE_SLOTS).map(|_| CachedTerm::default()).collect(),
            encoded: Vec::new(),
            tally: Tally::default(),
        }
    }

    fn prepare(&mut self, k: usize, t: &TermSlice<'_>, scope: &mut BlankScope) {
        let slot = &mut self.slots[k];
        slot.miss = false;
        slot.stored = true;
        slot.warn = None;
        slot.refused = false;
        match *t {
            TermSlice::Blank(label) => scope.label(label, &mut slot.text),
            TermSlice::Literal { lang: Some(lang), .. } => format_lang_tag(lang, &mut slot.text),
            TermSlice::Literal { lex, lang: None, datatype: Some(dt) } if dt != XSD_STRING => {
                if let Some(id) = self.jena.inline_literal(lex, dt) {
                    slot.stored = false;
                    slot.id = id.0;
                    return;
                }
            }
            _ => {}
        }
        let slot = &mut self.slots[k];
        slot.bytes.clear();
        encode_term(&slot_term(t, &slot.text), &mut slot.bytes);
        slot.hash = self.dict.hash(&slot.bytes);
        let cached = &mut self.cache[(slot.hash as usize) % CACHE_SLOTS];
        if cached.hash == slot.hash && cached.bytes == slot.bytes {
            slot.id = cached.id;
            slot.warn = cached.warn;
            return;
        }
        match judge(t) {
            Ok(warn) => slot.warn = warn,
            Err(()) => {
                slot.refused = true;
                return;
            }
        }
        match self.dict.get(&slot.bytes, slot.hash) {
            Some(id) => {
                slot.id = id;
                cached.hash = slot.hash;
                cached.id = id;
                cached.warn = slot.warn;
                cached.bytes.clear();
                cached.bytes.extend_from_slice(&slot.bytes);
            }
            None => slot.miss = true,
        }
    }

    /// Encodes a statement, or `None` when a new term fails validation (the caller then
    /// lets the full parser report the line). Nothing is interned in that case.
    /// `quad_syntax`: the line is N-Quads (see [`DEFAULT_GRAPH_NODE`]).
    pub fn statement(
        &mut self,
        st: &FastStatement<'_>,
        scope: &mut BlankScope,
        quad_syntax: bool,
    ) -> io::Result<Option<Encoded>> {
        Ok(self.statements(std::slice::from_ref(st), scope, quad_syntax)?.map(|e| e[0]))
    }

    /// Encodes statements all or none (one Turtle statement's `;`/`,` lists): `None` when a
    /// new term fails validation, and then nothing is interned. Terms are interned in the
    /// order the full parser's path interns them. `quad_syntax`: N-Quads or TriG.
    pub fn statements<'a>(
        &mut self,
        sts: &[FastStatement<'a>],
        scope: &mut BlankScope,
        quad_syntax: bool,
    ) -> io::Result<Option<&[Encoded]>> {
        // The graph term is stored even when it names the default graph (as xloader does).
        let terms = |st: &FastStatement<'a>| -> [Option<TermSlice<'a>>; 4] {
            let graph = st.graph.or(quad_syntax.then_some(TermSlice::Iri(DEFAULT_GRAPH_NODE)));
            [Some(st.subject), Some(TermSlice::Iri(st.predicate)), Some(st.object), graph]
        };
        if self.slots.len() < 4 * sts.len() {
            self.slots.resize_with(4 * sts.len(), Slot::default);
        }
        for (i, st) in sts.iter().enumerate() {
            let previous = i.checked_sub(1).map(|j| terms(&sts[j]));
            for (k, t) in terms(st).iter().enumerate() {
                if let Some(t) = t {
                    self.slots[4 * i + k].same = previous.is_some_and(|p| p[k].as_ref() == Some(t));
                    if !self.slots[4 * i + k].same {
                        self.prepare(4 * i + k, t, scope);
                    }
                }
            }
        }
        for (i, st) in sts.iter().enumerate() {
            for (k, t) in terms(st).iter().enumerate() {
                if let Some(t) = t {
                    let slot = &self.slots[4 * i + k];
                    if !slot.same && (slot.refused || (slot.miss && !valid(t))) {
                        return Ok(None);
                    }
                }
            }
        }
        self.encoded.clear();
        for (i, st) in sts.iter().enumerate() {
            for (k, t) in terms(st).iter().enumerate() {
                if t.is_some() {
                    let n = 4 * i + k;
                    if self.slots[n].same {
                        self.slots[n].id = self.slots[n - 4].id;
                        self.slots[n].warn = self.slots[n - 4].warn;
                    } else if self.slots[n].miss {
                        let slot = &mut self.slots[n];
                        slot.id = self.dict.intern_hashed(&slot.bytes, slot.hash)?;
                    }
                }
            }
            let default_graph = match st.graph {
                None => true,
                Some(TermSlice::Iri(g)) => DEFAULT_GRAPH_IRIS.contains(&g),
                Some(_) => false,
            };
            for (k, t) in terms(st).iter().enumerate() {
                if let (Some(t), Some(kind)) = (t, self.slots[4 * i + k].warn) {
                    self.tally.add(kind, slice_text(t));
                }
            }
            let [s, p, o, g] = [0, 1, 2, 3].map(|k| self.slots[4 * i + k].id);
            self.encoded.push(if default_graph { Encoded::Triple([s, p, o]) } else { Encoded::Quad([g, s, p, o]) });
        }
        Ok(Some(&self.encoded))
    }
}

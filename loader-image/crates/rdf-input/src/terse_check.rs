//! Skip mode's promise for Turtle/TriG, as a checkable property (used by the seeded property
//! test below and by the `input_terse_recovery` fuzz target): generated documents with
//! injected errors, parsed by [`parse_terse`](crate::parse_terse); every statement written
//! is either loaded exactly as a strict parse of it alone gives it (same graph) or lies
//! inside a reject's line range; nothing else is loaded; every bad statement is reported,
//! and no reject is about valid statements only.

use std::collections::BTreeSet;
use std::fmt::Write;

use oxrdf::{BlankNode, GraphName, Literal, NamedNode, NamedOrBlankNode, Quad, Term};

use crate::fastline::{FastStatement, TermSlice};
use crate::terse::FastModel;
use crate::{parse_terse, Rejected, Syntax};

/// Random choices: from the fuzzer's bytes first, then from a seeded xorshift.
pub struct Choices<'a> {
    bytes: &'a [u8],
    state: u64,
}

impl<'a> Choices<'a> {
    pub fn new(bytes: &'a [u8], seed: u64) -> Self {
        Choices { bytes, state: seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1 }
    }
    fn next(&mut self) -> u64 {
        if let Some((&b, rest)) = self.bytes.split_first() {
            self.bytes = rest;
            return b as u64;
        }
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        self.state >> 11
    }
    /// 0..n
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    fn pick<'b>(&mut self, xs: &[&'b str]) -> &'b str {
        xs[self.below(xs.len() as u64) as usize]
    }
}

/// One statement of a generated document.
#[derive(Debug)]
pub struct Statement {
    /// First and last line.
    pub lines: (u64, u64),
    pub bad: bool,
    /// Its quads, as a strict parse of it alone (with the directives and its block) gives them.
    pub expected: BTreeSet<String>,
}

#[derive(Debug)]
pub struct Case {
    pub trig: bool,
    pub doc: String,
    pub statements: Vec<Statement>,
}

const OBJECTS: &[&str] = &[
    "ex:o",
    "<http://ex/o.x#frag>",
    "ex:o.x",
    "\"a . } { # ; , ] [\"",
    "'single . } {'",
    "\"\"\"long\n. } {\n # not a comment .\"\"\"",
    "'''also\nlong . '''",
    "1.5",
    ".5",
    "7",
    "1e3",
    "1.e3",
    "-2.0E-1",
    "true",
    "\"x\"@en",
    "\"x\"@en-GB",
    "\"5\"^^ex:dt",
    "\"esc \\\" . }\"",
    "_:b1",
    "_:b2",
    "p0:thing",
    "ex:a\\.b",
];
const SUBJECTS: &[&str] = &["ex:s", "<http://ex/s.1>", "_:b1", "ex:s.t", "p1:subject", "<http://ex/s#x>"];
const PREDICATES: &[&str] = &["ex:p", "a", "<http://ex/p.q>", "p0:pred", "ex:p.r"];

struct Doc {
    text: String,
    line: u64,
}

impl Doc {
    fn push(&mut self, s: &str) {
        self.line += s.matches('\n').count() as u64;
        self.text.push_str(s);
    }
}

/// A statement's text and whether it is bad. `dot`: ends with a dot (the last statement
/// of a block may go without).
fn statement(c: &mut Choices<'_>, allow_missing_dot: bool, dot: bool) -> (String, bool) {
    let sep = |c: &mut Choices<'_>| -> &'static str {
        match c.below(10) {
            0 => "\n    ",
            1 => " # a comment . } {\n  ",
            _ => " ",
        }
    };
    let mut s = String::new();
    s.push_str(c.pick(SUBJECTS));
    let preds = 1 + c.below(3);
    for i in 0..preds {
        if i > 0 {
            s.push_str(" ;");
            s.push_str(sep(c));
        } else {
            s.push(' ');
        }
        s.push_str(c.pick(PREDICATES));
        let objs = 1 + c.below(3);
        for j in 0..objs {
            s.push_str(if j > 0 { " ," } else { "" });
            s.push_str(sep(c));
            s.push_str(c.pick(OBJECTS));
        }
    }
    let mut end = if dot { " ." } else { "" };
    let bad = c.chance(25);
    if bad {
        // (Not an unterminated string: it runs on to the next quote, as the grammar's tokens
        // say, and the text after that quote is read as tokens: more rejects, statements
        // moved between blocks -- there is no statement structure left to keep.)
        let kinds = if allow_missing_dot && dot { 8 } else { 7 };
        match c.below(kinds) {
            0 => s.push_str(" , nope:x"),
            1 => s = format!("{} ex:p", c.pick(SUBJECTS)),
            2 => s.push_str(" ]"),
            3 => s.push_str(" , <http://a b>"),
            4 => s = format!("\"literal\" ex:p {}", c.pick(OBJECTS)),
            5 => s.push_str(" ex:extra"),
            6 => s.push_str(" , ( ex:o"),
            _ => end = "", // the next statement runs into it
        }
    }
    s.push_str(end);
    (s, bad)
}

/// A strict parse of `text` alone.
fn strict(trig: bool, text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let syntax = if trig { Syntax::TriG } else { Syntax::Turtle };
    parse_terse::<()>(
        syntax,
        text.as_bytes(),
        None,
        |q| {
            out.insert(q.to_string());
            Ok(())
        },
        |r| panic!("a statement generated valid is not: {r:?}\n{text}"),
    )
    .unwrap_or_else(|_| panic!("parse of {text}"));
    out
}

/// Generates a document (TriG when `trig`).
pub fn generate(c: &mut Choices<'_>, trig: bool) -> Case {
    let mut doc = Doc { text: String::new(), line: 1 };
    let mut statements = Vec::new();
    let mut directives = String::new();
    let directive = |doc: &mut Doc, directives: &mut String, d: String| {
        doc.push(&d);
        doc.push("\n");
        directives.push_str(&d);
        directives.push('\n');
    };
    directive(&mut doc, &mut directives, "@prefix ex: <http://ex/> .".into());
    directive(&mut doc, &mut directives, "PREFIX p0: <http://p0/one/>".into());
    directive(&mut doc, &mut directives, "prefix p1: <http://p1/>".into());
    let items = 1 + c.below(12);
    // after a statement without its dot, a directive would be read as part of it
    let mut runs_on = false;
    for item in 0..items {
        if !runs_on && c.chance(15) {
            let ns = c.pick(&["<http://p0/two/>", "<http://p0/one/>", "<http://p0/three.x/>"]);
            let d = if c.chance(50) { format!("@prefix p0: {ns} .") } else { format!("PREFIX p0: {ns}") };
            directive(&mut doc, &mut directives, d);
        }
        if trig && c.chance(50) {
            let opener = match c.below(4) {
                0 => format!("GRAPH <http://g/{item}> {{"),
                1 => format!("ex:g{item} {{"),
                2 => format!("_:g{item} {{"),
                _ => "{".to_string(),
            };
            doc.push(&opener);
            doc.push("\n");
            let n = c.below(5);
            for k in 0..n {
                let last = k + 1 == n;
                let dot = !last || c.chance(50);
                let (s, bad) = statement(c, !last, dot);
                runs_on = false;
                let first = doc.line;
                doc.push("  ");
                doc.push(&s);
                let lines = (first, doc.line);
                let expected =
                    if bad { BTreeSet::new() } else { strict(true, &format!("{directives}{opener}\n{s}\n}}\n")) };
                statements.push(Statement { lines, bad, expected });
                doc.push("\n");
            }
            doc.push("}\n");
        } else {
            let (s, bad) = statement(c, true, true);
            runs_on = bad && !s.ends_with('.');
            let first = doc.line;
            doc.push(&s);
            let lines = (first, doc.line);
            let expected = if bad { BTreeSet::new() } else { strict(trig, &format!("{directives}{s}\n")) };
            statements.push(Statement { lines, bad, expected });
            doc.push("\n");
        }
    }
    Case { trig, doc: doc.text, statements }
}

/// Parses the case as the loader does and checks the promise; Err says what broke.
pub fn check(case: &Case) -> Result<(), String> {
    let mut got = BTreeSet::new();
    let mut rejects: Vec<Rejected> = Vec::new();
    let syntax = if case.trig { Syntax::TriG } else { Syntax::Turtle };
    parse_terse::<()>(
        syntax,
        case.doc.as_bytes(),
        None,
        |q: Quad| {
            got.insert(q.to_string());
            Ok(())
        },
        |r| {
            rejects.push(r);
            Ok(())
        },
    )
    .map_err(|_| "I/O error from a string".to_string())?;
    let mut why = String::new();
    let all: BTreeSet<&String> = case.statements.iter().flat_map(|s| &s.expected).collect();
    for q in &got {
        if !all.contains(q) {
            let _ = writeln!(why, "loaded, but no statement of the input gives it: {q}");
        }
    }
    let covered = |lines: (u64, u64)| rejects.iter().any(|r| r.start_line <= lines.0 && lines.1 <= r.end_line);
    let touched = |lines: (u64, u64), r: &Rejected| {
        r.start_line <= lines.1 && lines.0 <= r.end_line && r.start_line <= r.end_line
    };
    for s in &case.statements {
        if s.bad {
            if !rejects.iter().any(|r| touched(s.lines, r)) {
                let _ = writeln!(why, "bad statement at lines {:?} not reported", s.lines);
            }
        } else if !s.expected.iter().all(|q| got.contains(q)) && !covered(s.lines) {
            let missing: Vec<_> = s.expected.iter().filter(|q| !got.contains(*q)).collect();
            let _ = writeln!(why, "statement at lines {:?} neither loaded nor rejected: missing {missing:?}", s.lines);
        }
    }
    for r in &rejects {
        if !case.statements.iter().any(|s| s.bad && touched(s.lines, r)) {
            let _ = writeln!(why, "reject about valid statements only: {r:?}");
        }
    }
    let bad = case.statements.iter().filter(|s| s.bad).count();
    if rejects.len() > bad {
        let _ = writeln!(why, "{} rejects for {bad} bad statements: {rejects:?}", rejects.len());
    }
    if why.is_empty() {
        Ok(())
    } else {
        Err(format!("{why}\n--- document ({:?}):\n{}", syntax, case.doc))
    }
}

/// What one parse gave: quads and rejects in order, then the prefix declarations (skip
/// mode), or the quads up to the first error and that error (strict mode).
type Outcome = (Vec<String>, Vec<Rejected>, Vec<(String, String)>);

fn outcome(
    doc: &[u8],
    trig: bool,
    base: Option<&str>,
    strict: bool,
    split: Option<usize>,
    fast: Option<FastModel<'_>>,
) -> Outcome {
    let (mut quads, mut rejects) = (Vec::new(), Vec::new());
    let mut on_quad = |q: Quad| {
        quads.push(q.to_string());
        Ok(())
    };
    let mut on_reject = |r: Rejected| {
        rejects.push(r);
        if strict {
            Err(())
        } else {
            Ok(())
        }
    };
    let declared = match split {
        Some(target) => crate::terse::split_with(trig, doc, base, target, fast, &mut on_quad, &mut on_reject),
        None => {
            let syntax = if trig { Syntax::TriG } else { Syntax::Turtle };
            parse_terse(syntax, doc, base, &mut on_quad, &mut on_reject)
        }
    };
    let declared = match declared {
        Ok(d) => d,
        Err(Ok(io)) => panic!("I/O error from a byte slice: {io}"),
        Err(Err(())) => Vec::new(), // strict: stopped at the first error
    };
    (quads, rejects, declared)
}

/// The parallel split against the sequential parse, on any bytes: cut into chunks of
/// `target` bytes, in skip and in strict mode, the same quads (blank nodes included), the
/// same rejects and errors with the same positions, the same prefix declarations.
pub fn check_split(doc: &[u8], trig: bool, base: Option<&str>, target: usize) -> Result<(), String> {
    for strict in [false, true] {
        let seq = outcome(doc, trig, base, strict, None, None);
        let split = outcome(doc, trig, base, strict, Some(target), None);
        if seq != split {
            return Err(format!(
                "split into {target}-byte chunks (strict: {strict}) differs from the sequential parse:\n\
                 sequential: {seq:?}\nsplit: {split:?}\n--- document (TriG: {trig}):\n{}",
                String::from_utf8_lossy(doc)
            ));
        }
    }
    Ok(())
}

const RDF_LANG_STRING: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString";
const RDF_DIR_LANG_STRING: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#dirLangString";

/// A model of the pipeline's fast encoding (crates/storage/src/encode.rs): the quads that
/// fast-path statements stand for, built with oxrdf's checking constructors (IRIs by oxiri,
/// language tags by oxilangtag, as the pipeline checks a new term), or `None` when a term
/// fails them and oxttl must decide.
pub fn fast_quads(statements: &[FastStatement<'_>]) -> Option<Vec<Quad>> {
    fn term(t: &TermSlice<'_>) -> Option<Term> {
        Some(match *t {
            TermSlice::Iri(iri) => NamedNode::new(iri).ok()?.into(),
            TermSlice::Blank(label) => BlankNode::new_unchecked(label).into(),
            TermSlice::Literal { lex, lang: Some(lang), .. } => {
                Literal::new_language_tagged_literal(lex, lang).ok()?.into()
            }
            TermSlice::Literal { lex, lang: None, datatype: Some(dt) } => {
                if dt == RDF_LANG_STRING || dt == RDF_DIR_LANG_STRING {
                    return None;
                }
                Literal::new_typed_literal(lex, NamedNode::new(dt).ok()?).into()
            }
            TermSlice::Literal { lex, lang: None, datatype: None } => Literal::new_simple_literal(lex).into(),
        })
    }
    let mut quads = Vec::with_capacity(statements.len());
    for st in statements {
        let subject = match term(&st.subject)? {
            Term::NamedNode(n) => NamedOrBlankNode::NamedNode(n),
            Term::BlankNode(b) => NamedOrBlankNode::BlankNode(b),
            other => panic!("the fast path gave a literal subject: {other}"),
        };
        let graph = match st.graph.as_ref().map(term) {
            None => GraphName::DefaultGraph,
            Some(Some(Term::NamedNode(n))) => GraphName::NamedNode(n),
            Some(Some(Term::BlankNode(b))) => GraphName::BlankNode(b),
            Some(other) => panic!("a graph name the fast path cannot give: {other:?}"),
        };
        quads.push(Quad::new(subject, NamedNode::new(st.predicate).ok()?, term(&st.object)?, graph));
    }
    Some(quads)
}

/// The Turtle/TriG fast path (fastterse.rs) against oxttl, on any bytes: cut into chunks of
/// `target` bytes and parsed with the fast path on (its statements taken through
/// [`fast_quads`]), in skip and in strict mode, the same quads in the same order (blank
/// nodes included), the same rejects and errors at the same positions, the same prefix
/// declarations as without it. Ok: how many statements the fast path gave.
pub fn check_fast(doc: &[u8], trig: bool, base: Option<&str>, target: usize) -> Result<usize, String> {
    let taken = std::cell::Cell::new(0);
    let model = |st: &[FastStatement<'_>]| {
        let quads = fast_quads(st);
        taken.set(taken.get() + quads.as_ref().map_or(0, Vec::len));
        quads
    };
    for strict in [false, true] {
        let oxttl = outcome(doc, trig, base, strict, Some(target), None);
        let fast = outcome(doc, trig, base, strict, Some(target), Some(&model));
        if oxttl != fast {
            return Err(format!(
                "with the fast path ({target}-byte chunks, strict: {strict}) the parse differs:\n\
                 oxttl: {oxttl:?}\nfast path: {fast:?}\n--- document (TriG: {trig}):\n{}",
                String::from_utf8_lossy(doc)
            ));
        }
    }
    Ok(taken.get())
}

/// `doc` with a few bytes changed where the grammar is touchy (quotes, brackets, dots,
/// braces, comment marks, directives), so that cuts fall inside broken statements too.
pub fn mutate(c: &mut Choices<'_>, doc: &str) -> Vec<u8> {
    let mut bytes = doc.as_bytes().to_vec();
    const PIECES: &[&str] = &[
        ".",
        "\"",
        "'",
        "<",
        ">",
        "{",
        "}",
        "[",
        "]",
        "(",
        ")",
        "#",
        "\n",
        ";",
        ",",
        "_:b1 ",
        "[] ",
        "PREFIX ex: <http://ex2/>\n",
        "@base <http://b/> .\n",
        "\"\"\"",
        "{|",
        "|}",
        "<<",
        ">>",
        "~",
    ];
    for _ in 0..c.below(4) {
        if bytes.is_empty() {
            break;
        }
        let at = c.below(bytes.len() as u64 + 1) as usize;
        match c.below(3) {
            0 => {
                bytes.remove(at.min(bytes.len() - 1));
            }
            _ => {
                let p = c.pick(PIECES);
                bytes.splice(at..at, p.bytes());
            }
        }
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The property on 3000 generated documents of each syntax (seeded: the same each run).
    #[test]
    fn skip_mode_keeps_every_statement_or_rejects_it() {
        for seed in 0..3000u64 {
            for trig in [false, true] {
                let case = generate(&mut Choices::new(&[], seed * 2 + trig as u64), trig);
                if let Err(e) = check(&case) {
                    panic!("seed {seed}: {e}");
                }
            }
        }
    }

    /// The parallel split gives what the sequential parse gives, on generated documents (with
    /// blank-node lists, collections and anonymous graphs added) and on mutated ones, cut
    /// into chunks as small as a unit.
    #[test]
    fn split_parse_equals_sequential_parse() {
        for seed in 0..1500u64 {
            for trig in [false, true] {
                let mut c = Choices::new(&[], seed * 2 + trig as u64);
                let mut doc = generate(&mut c, trig).doc;
                if c.chance(50) {
                    doc.push_str("ex:s ex:p [ ex:q ( 1 [] _:b1 ) ] .\n[] ex:p ex:o .\n");
                }
                if trig && c.chance(50) {
                    doc.push_str("[] { ex:s ex:p [] . ex:t ex:p ( 1 2 ) }\nGRAPH _:g1 { ex:a ex:b _:b1 }\n");
                }
                let target = [1, 7, 64, 1 << 20][c.below(4) as usize];
                if let Err(e) = check_split(doc.as_bytes(), trig, None, target) {
                    panic!("seed {seed}: {e}");
                }
                let mutated = mutate(&mut c, &doc);
                if let Err(e) = check_split(&mutated, trig, Some("http://base/"), target) {
                    panic!("seed {seed} (mutated): {e}");
                }
            }
        }
    }

    /// The fast path gives what oxttl gives, on generated documents and on mutated ones (see
    /// [`mutate`]), with and without a base; and it does take most generated statements.
    #[test]
    fn fast_path_parse_equals_oxttl() {
        let (mut taken, mut statements) = (0, 0);
        for seed in 0..1500u64 {
            for trig in [false, true] {
                let mut c = Choices::new(&[], seed * 2 + trig as u64 + 7);
                let case = generate(&mut c, trig);
                statements += case.statements.len();
                let target = [1, 64, 1 << 20][c.below(3) as usize];
                let base = c.chance(50).then_some("http://base/a/b");
                match check_fast(case.doc.as_bytes(), trig, base, target) {
                    Ok(n) => taken += n,
                    Err(e) => panic!("seed {seed}: {e}"),
                }
                let mutated = mutate(&mut c, &case.doc);
                if let Err(e) = check_fast(&mutated, trig, base, target) {
                    panic!("seed {seed} (mutated): {e}");
                }
            }
        }
        // (Counted in both modes; most generated statements hold a term left to oxttl on purpose.)
        assert!(taken > statements / 2, "the fast path took {taken} quads of {statements} statements");
    }

    /// The careful points of the fast path against oxttl: IRIs that base resolution could
    /// change, names with dots, colons and `%`, numbers, TriG blocks (the fast path starts
    /// once oxttl named the block's graph), blank labels beside anonymous nodes, CRs.
    #[test]
    fn fast_path_careful_points_equal_oxttl() {
        let turtle = "@prefix ex: <http://ex/> .\n@prefix : <http://e/a.b/> .\n\
            <http:foo> <HTTP://A/b> <urn:x:y> , <http://a/b/./c> , <http://a/b/../c> , <http://a> .\n\
            ex:s ex:p ex:o.x , ex:o. ex:t :p.q :r:s%41.\n_:b1 a ex:T ; ex:q _:b1.x, [ ex:r _:b1 ] .\n\
            ex:s ex:p 1 , -2.5 , +3e4 , 1. ex:s ex:p true, false, \"x\"@EN-gb, 'y'^^ex:d .\r\n\
            ex:s ex:p \"a\"^^<rel> , <rel> .\nex:s ex:p ex:o # a comment\r ex:q .\n\
            BASE <http://b/x/../y/>\nex:s ex:p <http://c/d>, <z> .\nex:s ex:p nope:x .\nex:s ex:p ex:o ; ; .\n";
        let trig = "@prefix ex: <http://ex/> .\nex:g { ex:a ex:b ex:c . ex:d ex:e ex:f . ex:h ex:i ex:j }\n\
            { ex:a ex:b ex:c . ex:d ex:e 1 . }\n[] { ex:a ex:b _:x . ex:d ex:e _:x . }\n\
            _:g { ex:a ex:b ex:c . ex:d ex:e ex:f . }\nGRAPH <http://g/> { ex:a ex:b [] . ex:d ex:e ex:f . ex:k ex:l ex:m . }\n\
            ex:top ex:level ex:triple .\nex:g2 { ex:a ex:b bad:c . ex:d ex:e ex:f . }\n";
        let mut taken = 0;
        for (doc, trig) in [(turtle, false), (trig, true)] {
            for base in [None, Some("http://base/a/b")] {
                for target in [1, 16, 1 << 20] {
                    taken += check_fast(doc.as_bytes(), trig, base, target).unwrap_or_else(|e| panic!("{e}"));
                }
            }
        }
        assert!(taken > 100, "the fast path took {taken} quads");
    }
}

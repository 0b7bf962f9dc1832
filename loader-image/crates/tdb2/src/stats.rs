//! `stats.opt`: the optimizer statistics Jena reads from the generation directory (docs/tdb2-format.md §9).

use std::fmt::Write as _;

pub const RDF_TYPE: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type";
const RDF_MEMBER_PREFIX: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#_";

/// Counts over the default graph, gathered while its indexes stream out of the sort.
#[derive(Debug, Default, Clone)]
pub struct Stats {
    /// Number of distinct triples in the default graph.
    pub count: u64,
    /// (predicate IRI, number of triples).
    pub predicates: Vec<(String, u64)>,
    /// (class IRI, number of `?x rdf:type <class>` triples).
    pub classes: Vec<(String, u64)>,
}

fn is_container_membership(p: &str) -> bool {
    p.strip_prefix(RDF_MEMBER_PREFIX).is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Renders the SSE file the way `tdb2.tdbstats` does, sorted so that output is
/// deterministic. `rdf:_N` predicates are counted in `count` but not listed, as in Jena.
pub fn render(stats: &Stats) -> String {
    let mut s = String::new();
    s.push_str("(stats\n");
    let _ = writeln!(s, "  (meta (count {}))", stats.count);
    let mut classes = stats.classes.clone();
    classes.sort();
    for (c, n) in &classes {
        let _ = writeln!(s, "  ((VAR <{RDF_TYPE}> <{c}>) {n})");
    }
    let mut preds = stats.predicates.clone();
    preds.sort();
    for (p, n) in preds.iter().filter(|(p, _)| !is_container_membership(p)) {
        let _ = writeln!(s, "  (<{p}> {n})");
    }
    s.push_str("  (other 0))\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counts_and_skips_membership_predicates() {
        let st = Stats {
            count: 5,
            predicates: vec![("http://e/p".into(), 3), (format!("{RDF_MEMBER_PREFIX}1"), 1), (RDF_TYPE.into(), 1)],
            classes: vec![("http://e/C".into(), 1)],
        };
        let out = render(&st);
        assert!(out.contains("(meta (count 5))"));
        assert!(out.contains("(<http://e/p> 3)"));
        assert!(out.contains(&format!("((VAR <{RDF_TYPE}> <http://e/C>) 1)")));
        assert!(!out.contains("#_1>"));
        assert!(out.trim_end().ends_with("(other 0))"));
    }
}

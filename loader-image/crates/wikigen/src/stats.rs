//! What a segment (and the dump) holds: counts of every shape, reported as JSON beside it.

macro_rules! stats {
    ($($(#[$doc:meta])* $name:ident),* $(,)?) => {
        #[derive(Clone, Debug, Default, PartialEq, Eq)]
        pub struct Stats {
            $($(#[$doc])* pub $name: u64,)*
        }

        impl Stats {
            pub fn add(&mut self, o: &Stats) {
                $(self.$name += o.$name;)*
            }

            pub fn to_json(&self) -> serde_json::Value {
                let mut m = serde_json::Map::new();
                $(m.insert(stringify!($name).to_string(), self.$name.into());)*
                serde_json::Value::Object(m)
            }
        }
    };
}

stats! {
    /// Triples written (statements of the Turtle text, duplicates included: the dump repeats
    /// shared references and values in every entity that uses them).
    triples,
    /// Uncompressed bytes.
    bytes,
    /// Chunk headers: the @prefix block and wikibase:Dump, at the start of each shard.
    headers,
    items,
    kind_article,
    kind_human,
    kind_place,
    kind_taxon,
    kind_category,
    kind_event,
    kind_astro,
    kind_generic,
    /// Small items that fill a segment to its exact count.
    kind_small,
    properties,
    lexemes,
    forms,
    senses,
    statements,
    /// wdt: values (best-rank statements).
    truthy,
    preferred,
    deprecated,
    somevalue,
    novalue,
    qualifiers,
    /// prov:wasDerivedFrom links.
    references,
    /// ref: nodes written (once per entity that cites them).
    reference_nodes,
    value_nodes_time,
    value_nodes_quantity,
    value_nodes_globe,
    /// Labels (each three triples: rdfs:label, skos:prefLabel, schema:name).
    labels,
    descriptions,
    aliases,
    sitelinks,
    badges,
    /// Time values with a year before 1 (0 is 1 BCE) or after 9999.
    dates_before_year_1,
    dates_after_9999,
    decimals_negative,
    /// geo:wktLiteral literals, and those on another globe than Earth.
    wkt_points,
    wkt_other_globe,
    /// Blank-node occurrences (or skolem IRIs with --skolem).
    blank_nodes,
    /// Literals whose language tag the Turtle grammar allows but BCP 47 does not
    /// (zh-classical, mis-x-Q12345678): Jena keeps them with a warning.
    lang_not_bcp47,
    /// IRIs with a bad percent-encoding: Jena keeps them with a warning.
    bad_iris,
}

/// Counts, in Turtle text written by this generator, the literals whose language tag has a
/// subtag longer than BCP 47 allows, and the IRIs with a `%` not followed by two hex digits:
/// each is one triple's object, so these are the loader's warning counts.
pub fn scan_warnings(text: &[u8]) -> (u64, u64) {
    let (mut tags, mut iris) = (0, 0);
    let mut i = 0;
    while i < text.len() {
        match text[i] {
            b'"' => {
                // Skip the literal (escapes included), then look at a language tag.
                i += 1;
                while i < text.len() && text[i] != b'"' {
                    i += if text[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
                if i < text.len() && text[i] == b'@' {
                    let start = i + 1;
                    let mut end = start;
                    while end < text.len() && (text[end].is_ascii_alphanumeric() || text[end] == b'-') {
                        end += 1;
                    }
                    if text[start..end].split(|&b| b == b'-').any(|s| s.len() > 8) {
                        tags += 1;
                    }
                    i = end;
                }
            }
            b'<' => {
                let start = i + 1;
                let mut end = start;
                while end < text.len() && text[end] != b'>' {
                    end += 1;
                }
                let iri = &text[start..end.min(text.len())];
                let bad = iri.iter().enumerate().any(|(j, &b)| {
                    b == b'%'
                        && !(j + 2 < iri.len() && iri[j + 1].is_ascii_hexdigit() && iri[j + 2].is_ascii_hexdigit())
                });
                if bad {
                    iris += 1;
                }
                i = end + 1;
            }
            b'#' if i == 0 || text[i - 1] == b'\n' => {
                while i < text.len() && text[i] != b'\n' {
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
    (tags, iris)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_finds_long_subtags_and_bad_escapes() {
        let t = b"wd:Q1 rdfs:label \"a\\\"@x\"@zh-classical, \"b\"@en-gb, \"c\"@mis-x-Q12345678, \"d\"@mis-x-Q1234 ;\n\
                  \twdtn:P1 <http://a/b%zz>, <http://a/%20>, <http://a/%>, <http://a/%2> .\n";
        assert_eq!(scan_warnings(t), (2, 3));
    }
}

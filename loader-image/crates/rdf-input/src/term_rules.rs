//! IRIs and language tags judged as Jena 5.6.0's parsers judge them (docs/fidelity.md).
//!
//! The RDF syntaxes' grammars decide what is refused: `LANGTAG ::= '@' [a-zA-Z]+ ('-'
//! [a-zA-Z0-9]+)*` and an IRIREF's characters (none of `#x00-#x20 <>"{}|^`\`, escapes
//! included); the loader also refuses an IRI without a scheme in N-Triples/N-Quads (a
//! deliberate difference from Jena, see test_jena_differences.py). What the grammar allows
//! but BCP 47 or RFC 3987 does not (`@zh-classical`, a bare `%`, a second `#`), Jena keeps
//! with a warning ("Language not valid", "Bad IRI"), and so does the loader: the term is
//! kept as written (Jena keeps such an IRI unresolved, its language tag formatted by
//! [`basic format`](https://datatracker.ietf.org/doc/html/rfc5646#section-2.1.1)) and the
//! occurrence is counted under its [`WarningKind`].

/// A kind of warning the loader counts in its report (`warnings`), one per term occurrence.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum WarningKind {
    /// A language tag the grammar allows but BCP 47 (RFC 5646) does not: Jena's
    /// "Language not valid".
    LanguageTag,
    /// An absolute IRI the grammar allows but RFC 3987 does not: Jena's "Bad IRI".
    Iri,
}

impl WarningKind {
    pub const ALL: [WarningKind; 2] = [WarningKind::LanguageTag, WarningKind::Iri];

    /// The key in the report's `warnings` and in the progress output.
    pub fn name(self) -> &'static str {
        match self {
            WarningKind::LanguageTag => "language-tag-not-bcp47",
            WarningKind::Iri => "iri-not-rfc3987",
        }
    }

    pub fn from_name(name: &str) -> Option<WarningKind> {
        WarningKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// What becomes of a term.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Kept, no warning.
    Valid,
    /// Kept as written, with a warning of this kind.
    Warn(WarningKind),
    /// Refused: a syntax error (the reason).
    Refused(&'static str),
}

/// `[a-zA-Z]+ ('-' [a-zA-Z0-9]+)*`: the Turtle/TriG/N-Triples/N-Quads LANGTAG after its `@`
/// (without an RDF 1.2 base direction). Whether Jena then warns, and how it stores the tag,
/// is Jena's own RFC 5646 parser's verdict (tdb2::langtag).
pub fn lang_tag_grammar(tag: &str) -> bool {
    let mut parts = tag.split('-');
    let first = parts.next().unwrap_or("");
    !first.is_empty()
        && first.bytes().all(|b| b.is_ascii_alphabetic())
        && parts.all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_alphanumeric()))
}

/// Characters an IRIREF may not hold (raw or escaped).
fn forbidden_in_iri(c: char) -> bool {
    c <= ' ' || matches!(c, '<' | '>' | '"' | '{' | '}' | '|' | '^' | '`' | '\\')
}

/// `scheme ":"` at the start (RFC 3986 §3.1).
fn has_scheme(iri: &str) -> bool {
    let b = iri.as_bytes();
    if !b.first().is_some_and(u8::is_ascii_alphabetic) {
        return false;
    }
    for &c in &b[1..] {
        match c {
            b':' => return true,
            c if c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'.') => {}
            _ => return false,
        }
    }
    false
}

/// Bytes allowed as they are in an http(s) IRI's path, query and fragment (unreserved,
/// sub-delims, `:`, `@`, `/`, `?`).
const PLAIN: [bool; 256] = {
    let mut t = [false; 256];
    let ok = b"-._~!$&'()*+,;=:@/?";
    let mut k = 0;
    while k < ok.len() {
        t[ok[k] as usize] = true;
        k += 1;
    }
    let mut c = 0;
    while c < 256 {
        if (c as u8).is_ascii_alphanumeric() {
            t[c] = true;
        }
        c += 1;
    }
    t
};

/// A quick sufficient test for RFC 3987 validity that covers almost every IRI of real data
/// (ASCII http(s) IRIs with a plain host): those skip the full IRI parser. `false` only
/// means "ask the parser".
fn plainly_valid(iri: &str) -> bool {
    let b = iri.as_bytes();
    let rest = if let Some(r) = b.strip_prefix(b"http://") {
        r
    } else if let Some(r) = b.strip_prefix(b"https://") {
        r
    } else {
        return false;
    };
    let auth_end = rest.iter().position(|&c| matches!(c, b'/' | b'?' | b'#')).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(auth_end);
    let (host, port) = match authority.iter().position(|&c| c == b':') {
        Some(p) => (&authority[..p], Some(&authority[p + 1..])),
        None => (authority, None),
    };
    if host.is_empty() || !host.iter().all(|&c| c.is_ascii_alphanumeric() || c == b'.' || c == b'-') {
        return false;
    }
    if port.is_some_and(|p| p.is_empty() || !p.iter().all(u8::is_ascii_digit)) {
        return false;
    }
    let mut fragment = false;
    let mut i = 0;
    while i < tail.len() {
        match tail[i] {
            b'#' if !fragment => fragment = true,
            b'%' => {
                if !(tail.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
                    && tail.get(i + 2).is_some_and(u8::is_ascii_hexdigit))
                {
                    return false;
                }
                i += 2;
            }
            c if PLAIN[c as usize] => {}
            _ => return false,
        }
        i += 1;
    }
    true
}

/// An IRI as the parser gives it (escapes decoded; in Turtle/TriG already resolved against
/// the base when it was valid).
pub fn judge_iri(iri: &str) -> Verdict {
    if plainly_valid(iri) {
        return Verdict::Valid;
    }
    if iri.chars().any(forbidden_in_iri) {
        return Verdict::Refused("an IRI may not hold spaces, controls or <>\"{}|^`\\");
    }
    if !has_scheme(iri) {
        return Verdict::Refused("a relative IRI where an absolute one is required");
    }
    if oxiri::Iri::parse(iri).is_ok() {
        Verdict::Valid
    } else {
        Verdict::Warn(WarningKind::Iri)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn language_tag_grammar() {
        for tag in ["en", "en-GB", "zh-classical", "abcdefghi", "en-a", "x-abcdefghi", "A-1"] {
            assert!(lang_tag_grammar(tag), "{tag}");
        }
        for tag in ["", "1en", "en-", "-en", "en--gb", "en_GB", "é", "en gb"] {
            assert!(!lang_tag_grammar(tag), "{tag}");
        }
    }

    #[test]
    fn iris() {
        for (iri, want) in [
            ("http://example.org/a", Verdict::Valid),
            ("https://example.org:8080/a/b?c=d#e", Verdict::Valid),
            ("urn:isbn:123", Verdict::Valid),
            ("http://example.org/é", Verdict::Valid),
            ("http://example.org/100%", Verdict::Warn(WarningKind::Iri)),
            ("http://example.org/a%zzb", Verdict::Warn(WarningKind::Iri)),
            ("http://example.org/a#b#c", Verdict::Warn(WarningKind::Iri)),
            ("http://example.org:port/", Verdict::Warn(WarningKind::Iri)),
            ("http://[::1/", Verdict::Warn(WarningKind::Iri)),
        ] {
            assert_eq!(judge_iri(iri), want, "{iri}");
        }
        for iri in ["http://a b", "http://a/{x}", "http://a/\u{1}", "rel", "/abs/path", "#frag", "1http://a"] {
            assert!(matches!(judge_iri(iri), Verdict::Refused(_)), "{iri}");
        }
    }

    /// Random strings over the characters that matter: whenever the quick test says valid,
    /// the full IRI parser agrees.
    #[test]
    fn the_quick_test_never_accepts_what_the_parser_refuses() {
        let alphabet: Vec<char> = "htps:/.-_~!$&'()*+,;=@?#%[]09afAFxz é\u{e000}".chars().collect();
        let prefixes = ["http://", "https://", "http://a", "https://h.example:80", ""];
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut accepted = 0;
        for _ in 0..200_000 {
            let mut s = prefixes[(next() % prefixes.len() as u64) as usize].to_string();
            for _ in 0..(next() % 12) {
                s.push(alphabet[(next() % alphabet.len() as u64) as usize]);
            }
            if plainly_valid(&s) {
                accepted += 1;
                assert!(oxiri::Iri::parse(s.as_str()).is_ok(), "{s}");
            }
        }
        assert!(accepted > 1000, "{accepted}");
    }
}

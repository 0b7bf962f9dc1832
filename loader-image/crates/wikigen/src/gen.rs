//! One segment of the dump: a run of entities written as `latest-all.ttl` writes them, sized to
//! an exact number of triples, from its own random stream (seed, segment number). Segments are
//! independent, so they are made in parallel; written in order they are the dump.

use crate::rng::{digest, Rng, Weighted};
use crate::stats::{scan_warnings, Stats};
use crate::ttl::{push_guid, push_hex, push_int, push_lang, push_name, push_padded, push_pct, push_str, push_u64, Ttl};
use crate::values::{
    push_blank, push_normalized_id, push_q_text, push_simple, value_body, value_digest, Dec, Globe, Quantity, Time, Val,
};
use crate::vocab::{
    language_weights, properties, DType, IdShape, Prop, Script, LANGUAGES, MONTHS_EN, PREFIXES, PROJECTS, SYLLABLES,
    WORDS,
};

/// What the dump is: its size, seed and the choices that change its bytes.
#[derive(Clone, Debug)]
pub struct Config {
    pub seed: u64,
    pub triples: u64,
    /// Chunks, each opened by the dump's header and prefixes (latest-all.ttl is chunks
    /// concatenated: the header and the @prefix lines recur mid-file).
    pub shards: u64,
    /// Write "some value" and the property restrictions' blank nodes as skolem IRIs
    /// (`<http://www.wikidata.org/.well-known/genid/…>`, the Query Service's form) instead.
    pub skolem: bool,
    /// Per million external-identifier and URL IRIs: one with a bad percent-encoding (`%`,
    /// `%zz`, `%u00e9`), which Jena keeps with a warning.
    pub bad_iri_ppm: u32,
}

/// How the dump is cut into segments: a function of the triple count only (never of the
/// threads), so that the bytes depend on the seed and the size alone.
#[derive(Clone, Copy, Debug)]
pub struct Layout {
    pub segment_triples: u64,
    pub segments: u64,
    pub shards: u64,
    id_stride: u64,
}

impl Layout {
    pub fn new(triples: u64, shards: u64) -> Layout {
        let segment_triples = triples.div_ceil(32).clamp(32_768, 1 << 20);
        let segments = triples.div_ceil(segment_triples).max(1);
        Layout { segment_triples, segments, shards: shards.clamp(1, segments), id_stride: segment_triples / 4 }
    }

    /// The triples of segment k (the last takes the remainder).
    pub fn budget(&self, triples: u64, k: u64) -> u64 {
        if k + 1 < self.segments {
            self.segment_triples
        } else {
            triples - self.segment_triples * (self.segments - 1)
        }
    }

    pub fn shard_of(&self, k: u64) -> u64 {
        k * self.shards / self.segments
    }

    pub fn starts_shard(&self, k: u64) -> bool {
        k == 0 || self.shard_of(k) != self.shard_of(k - 1)
    }
}

/// What every segment shares: the configuration and the catalogues.
pub struct World {
    pub cfg: Config,
    pub layout: Layout,
    pub props: Vec<Prop>,
    /// Catalogue index by property number.
    pidx: Vec<u16>,
    langs: Weighted,
    /// Languages with a Wikipedia (sitelinks), and their weights.
    wiki_langs: Vec<u16>,
    wiki_weights: Weighted,
    /// The long tail of external identifiers, favouring the first.
    ext_props: Vec<u16>,
    ext_weights: Weighted,
    /// Properties for a generic item's statements.
    generic_props: Vec<u16>,
    generic_weights: Weighted,
    /// The segment in which each property's definition is written.
    prop_segment: Vec<u64>,
    max_q: u64,
}

/// Wikis other than a language's own: (language-like code, wiki's item).
const WIKI_ITEMS: &[u64] = &[328, 48183, 8447, 11920, 10000, 206855, 169514, 837615, 199864, 54919, 1551807, 191168];
/// Databases that references say they are "stated in".
const STATED_IN: &[u64] = &[54919, 36578, 13406268, 19938912, 47757534, 5188229, 180686, 1139587, 1798125];
const POPULAR_CLASSES: &[u64] = &[5, 13442814, 16521, 486972, 4167836, 4167410, 532, 515, 11424, 482994, 7187, 8502];

impl World {
    pub fn new(cfg: Config) -> World {
        let layout = Layout::new(cfg.triples, cfg.shards);
        let props = properties();
        let max_id = props.iter().map(|p| p.id).max().unwrap_or(0) as usize;
        let mut pidx = vec![u16::MAX; max_id + 1];
        for (i, p) in props.iter().enumerate() {
            pidx[p.id as usize] = i as u16;
        }
        let wiki_langs: Vec<u16> = (0..LANGUAGES.len())
            .filter(|&i| {
                let c = LANGUAGES[i].0;
                (!c.contains('-') && c != "mul" && c != "nan")
                    || matches!(c, "be-tarask" | "zh-classical" | "zh-min-nan" | "bat-smg" | "fiu-vro" | "roa-tara")
                    || matches!(c, "map-bms" | "cbk-zam" | "nds-nl")
            })
            .map(|i| i as u16)
            .collect();
        let wiki_weights = Weighted::new(wiki_langs.iter().map(|&i| 1_000_000 / (i as u64 + 2)));
        let ext_props: Vec<u16> =
            (0..props.len()).filter(|&i| props[i].dtype == DType::ExternalId).map(|i| i as u16).collect();
        let ext_weights = Weighted::new((0..ext_props.len() as u64).map(|i| 100_000 / (i + 4)));
        let generic_props: Vec<u16> = (0..props.len())
            .filter(|&i| {
                !matches!(props[i].id, 31 | 143 | 248 | 813 | 854 | 4656 | 1545 | 2241 | 887 | 5137 | 2960 | 1065)
            })
            .map(|i| i as u16)
            .collect();
        let generic_weights = Weighted::new((0..generic_props.len() as u64).map(|i| 100_000 / (i + 8)));
        // Property definitions in proportion to the dump (one per 25,000 triples, at least 20,
        // the most used first), spread over the segments: Wikidata defines ~12,000 properties
        // among ~110 million entities, and a small dump must not be all definitions.
        let defined = (cfg.triples / 25_000).clamp(20, props.len() as u64);
        let prop_segment = (0..props.len() as u64)
            .map(|i| if i < defined { i * layout.segments / defined } else { u64::MAX })
            .collect();
        let max_q = layout.segments * layout.id_stride + 1000;
        World {
            cfg,
            layout,
            props,
            pidx,
            langs: language_weights(),
            wiki_langs,
            wiki_weights,
            ext_props,
            ext_weights,
            generic_props,
            generic_weights,
            prop_segment,
            max_q,
        }
    }

    fn p(&self, id: u32) -> u16 {
        let i = self.pidx[id as usize];
        debug_assert_ne!(i, u16::MAX, "P{id} not in the catalogue");
        i
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Rank {
    Normal,
    Preferred,
    Deprecated,
}

struct Stmt {
    prop: u16,
    val: Val,
    rank: Rank,
    best: bool,
    quals: Vec<(u16, Val)>,
    /// Indices into the entity's references.
    refs: Vec<u16>,
    guid: (u64, u64, bool),
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Article,
    Human,
    Place,
    Taxon,
    Category,
    Event,
    Astro,
    Generic,
}

/// An item or lexeme being planned, before it is written.
#[derive(Default)]
struct Plan {
    labels: Vec<(u16, String)>,
    descriptions: Vec<(u16, String)>,
    aliases: Vec<(u16, String)>,
    /// (language, project, title, badge)
    sitelinks: Vec<(u16, u8, String, u64)>,
    stmts: Vec<Stmt>,
    refs: Vec<Vec<(u16, Val)>>,
}

pub struct Segment<'w> {
    w: &'w World,
    k: u64,
    rng: Rng,
    t: Ttl,
    /// The entity's value nodes and references, written after its labels.
    vals: Ttl,
    refs: Ttl,
    seen_vals: Vec<[u64; 3]>,
    seen_refs: Vec<[u64; 3]>,
    pub stats: Stats,
    ent: Stats,
    next_q: u64,
    next_l: u64,
    last_subject: Option<u64>,
    plan: Plan,
    lang_seen: Vec<bool>,
}

/// Writes segment `k` of the dump: its Turtle text and what it holds.
pub fn segment(w: &World, k: u64) -> (Vec<u8>, Stats) {
    let budget = w.layout.budget(w.cfg.triples, k);
    let mut s = Segment {
        w,
        k,
        rng: Rng::new(w.cfg.seed, k),
        t: Ttl::new((budget * 64) as usize),
        vals: Ttl::new(4096),
        refs: Ttl::new(4096),
        seen_vals: Vec::new(),
        seen_refs: Vec::new(),
        stats: Stats::default(),
        ent: Stats::default(),
        next_q: 1 + k * w.layout.id_stride,
        next_l: 1 + k * (w.layout.id_stride / 8),
        last_subject: None,
        plan: Plan::default(),
        lang_seen: vec![false; LANGUAGES.len()],
    };
    s.run(budget);
    debug_assert_eq!(s.t.triples, budget);
    s.stats.triples = s.t.triples;
    s.stats.bytes = s.t.buf.len() as u64;
    (s.stats.lang_not_bcp47, s.stats.bad_iris) = scan_warnings(&s.t.buf);
    s.stats.wkt_points = count(&s.t.buf, b"^^geo:wktLiteral");
    (s.t.buf, s.stats)
}

impl<'w> Segment<'w> {
    fn run(&mut self, budget: u64) {
        if self.w.layout.starts_shard(self.k) {
            // The prefixes always (what follows uses them), the dump's own statement if it fits.
            self.t.buf.extend_from_slice(PREFIXES.as_bytes());
            self.t.buf.push(b'\n');
            self.attempt(budget, |s| s.header());
        }
        // This segment's share of the property definitions.
        let defs: Vec<u16> =
            (0..self.w.props.len()).filter(|&i| self.w.prop_segment[i] == self.k).map(|i| i as u16).collect();
        for p in defs {
            if !self.attempt(budget, |s| s.property(p)) {
                break;
            }
        }
        // Entities until sixteen in a row do not fit, then small ones to the exact count.
        let mut misses = 0;
        while self.t.triples < budget && misses < 16 {
            if self.attempt(budget, |s| s.entity()) {
                misses = 0;
            } else {
                misses += 1;
            }
        }
        while self.t.triples < budget {
            let r = budget - self.t.triples;
            if r >= 13 {
                self.attempt(budget, |s| s.small_item(r));
            } else {
                self.filler(r);
            }
        }
    }

    /// Writes one unit; rolls it back (text, count, its statistics) when it overshoots.
    fn attempt(&mut self, budget: u64, f: impl FnOnce(&mut Self)) -> bool {
        let (len, triples, next_q, next_l, last) =
            (self.t.buf.len(), self.t.triples, self.next_q, self.next_l, self.last_subject);
        self.ent = Stats::default();
        f(self);
        if self.t.triples > budget {
            self.t.truncate(len, triples);
            (self.next_q, self.next_l, self.last_subject) = (next_q, next_l, last);
            return false;
        }
        let ent = std::mem::take(&mut self.ent);
        self.stats.add(&ent);
        true
    }

    // ------------------------------------------------------------------ chunk header

    fn header(&mut self) {
        self.t.s().extend_from_slice(b"wikibase:Dump");
        self.t.p().extend_from_slice(b"a");
        self.t.o().extend_from_slice(b"schema:Dataset");
        self.t.o().extend_from_slice(b"owl:Ontology");
        self.t.po(b"cc:license", b"<http://creativecommons.org/publicdomain/zero/1.0/>");
        self.t.po(b"schema:softwareVersion", b"\"1.0.0\"");
        self.t.p().extend_from_slice(b"schema:dateModified");
        let shard = self.w.layout.shard_of(self.k);
        let buf = self.t.o();
        buf.extend_from_slice(b"\"2024-04-08T");
        push_padded(buf, 23 + shard / 60, 2);
        buf.push(b':');
        push_padded(buf, shard % 60, 2);
        buf.extend_from_slice(b":02Z\"^^xsd:dateTime");
        self.t.po(b"owl:imports", b"<http://wikiba.se/ontology-1.0.owl>");
        self.t.end();
        self.ent.headers += 1;
    }

    // ------------------------------------------------------------------ entities

    fn entity(&mut self) {
        if self.rng.pct(2) {
            return self.lexeme();
        }
        let kind = match self.rng.below(100) {
            0..=33 => Kind::Article,
            34..=45 => Kind::Human,
            46..=55 => Kind::Place,
            56..=61 => Kind::Taxon,
            62..=71 => Kind::Category,
            72..=73 => Kind::Event,
            74..=75 => Kind::Astro,
            _ => Kind::Generic,
        };
        self.item(kind);
    }

    fn new_q(&mut self) -> u64 {
        let q = self.next_q;
        self.next_q += self.rng.range(1, 2);
        q
    }

    /// An item elsewhere in the dump: a popular one or any.
    fn any_item(&mut self) -> u64 {
        match self.rng.below(10) {
            0..=3 => 1 + self.rng.below(5000) * self.rng.below(40).max(1),
            _ => self.rng.range(1, self.w.max_q),
        }
    }

    fn item(&mut self, kind: Kind) {
        let q = self.new_q();
        self.last_subject = Some(q);
        self.plan = Plan::default();
        let name = self.base_name(kind);
        self.plan_terms(kind, &name);
        self.plan_statements(kind, &name);
        self.plan_sitelinks(kind, &name);
        self.mark_best();
        self.write_item(q);
        self.ent.items += 1;
        match kind {
            Kind::Article => self.ent.kind_article += 1,
            Kind::Human => self.ent.kind_human += 1,
            Kind::Place => self.ent.kind_place += 1,
            Kind::Taxon => self.ent.kind_taxon += 1,
            Kind::Category => self.ent.kind_category += 1,
            Kind::Event => self.ent.kind_event += 1,
            Kind::Astro => self.ent.kind_astro += 1,
            Kind::Generic => self.ent.kind_generic += 1,
        }
    }

    // ------------------------------------------------------------------ names and texts

    fn syllable_word(&mut self, min: u64, max: u64) -> String {
        let n = self.rng.range(min, max);
        let mut w = String::new();
        for _ in 0..n {
            w.push_str(self.rng.pick_str(SYLLABLES));
        }
        let mut c = w.chars();
        match c.next() {
            Some(f) => f.to_uppercase().chain(c).collect(),
            None => w,
        }
    }

    fn words(&mut self, n: u64) -> String {
        let mut s = String::new();
        for i in 0..n {
            if i > 0 {
                s.push(' ');
            }
            s.push_str(self.rng.pick_str(WORDS));
        }
        s
    }

    fn base_name(&mut self, kind: Kind) -> String {
        let mut name = match kind {
            Kind::Human => format!("{} {}", self.syllable_word(2, 3), self.syllable_word(2, 4)),
            Kind::Article => {
                let n = self.rng.range(3, 12);
                let mut t = self.words(n);
                t[..1].make_ascii_uppercase();
                t
            }
            Kind::Taxon => format!("{} {}", self.syllable_word(3, 4), self.syllable_word(2, 4).to_lowercase()),
            Kind::Category => {
                let n = self.rng.range(1, 4);
                format!("Category:{}", self.words(n))
            }
            Kind::Place | Kind::Astro => self.syllable_word(2, 4),
            Kind::Event | Kind::Generic => {
                let n = self.rng.range(1, 3);
                let mut t = self.words(n);
                t[..1].make_ascii_uppercase();
                t
            }
        };
        // Now and then a quotation mark or a backslash, escaped in the dump.
        if self.rng.ppm(3000) {
            name = format!("\"{name}\"");
        } else if self.rng.ppm(300) {
            name.push_str(" \\ ");
            name.push_str(self.rng.pick_str(WORDS));
        }
        name
    }

    /// A name written in a language's script: Latin names as they are (sometimes with a
    /// local touch), others transliterated letter by letter into the script.
    fn localized(&self, name: &str, lang: u16, salt: u64) -> String {
        let script = LANGUAGES[lang as usize].1;
        if script == Script::Latin {
            if salt.is_multiple_of(7) {
                let mut s = name.to_string();
                s.push_str(match salt % 5 {
                    0 => "a",
                    1 => "us",
                    2 => "e",
                    3 => "o",
                    _ => "i",
                });
                return s;
            }
            return name.to_string();
        }
        transliterate(name, script, salt)
    }

    /// A phrase in a language: English for English, elsewhere each word turned into a word of
    /// that language (stable: the same phrase reads the same across the dump).
    fn phrase(&self, en: &str, lang: u16) -> String {
        let (code, script) = LANGUAGES[lang as usize];
        if matches!(code, "en" | "en-gb" | "en-ca" | "en-us" | "simple" | "mul") {
            return en.to_string();
        }
        let mut out = String::new();
        for (i, word) in en.split(' ').enumerate() {
            if i > 0 {
                out.push(' ');
            }
            if word.chars().all(|c| c.is_ascii_digit() || matches!(c, '(' | ')' | '\u{2013}')) {
                out.push_str(word);
                continue;
            }
            let d = digest(format!("{code}/{word}").as_bytes())[0];
            let n = 1 + d % 3;
            let mut w = String::new();
            for j in 0..n {
                w.push_str(SYLLABLES[((d >> (8 + 8 * j)) % 60) as usize]);
            }
            if script == Script::Latin {
                out.push_str(&w);
            } else {
                out.push_str(&transliterate(&w, script, d));
            }
        }
        out
    }

    /// `n` distinct languages, English most often among them.
    fn pick_langs(&mut self, n: usize, english: bool, out: &mut Vec<u16>) {
        out.clear();
        let n = n.min(LANGUAGES.len());
        self.lang_seen.iter_mut().for_each(|x| *x = false);
        if english && n > 0 {
            out.push(0);
            self.lang_seen[0] = true;
        }
        let mut tries = 0;
        while out.len() < n && tries < 20 * n {
            let l = self.w.langs.sample(&mut self.rng);
            tries += 1;
            if !self.lang_seen[l] {
                self.lang_seen[l] = true;
                out.push(l as u16);
            }
        }
        for l in 0..LANGUAGES.len() {
            if out.len() >= n {
                break;
            }
            if !self.lang_seen[l] {
                self.lang_seen[l] = true;
                out.push(l as u16);
            }
        }
    }

    fn plan_terms(&mut self, kind: Kind, name: &str) {
        let labels = match kind {
            Kind::Article => self.rng.tail(&[(70, 1, 1), (25, 2, 6), (5, 7, 30)]),
            Kind::Human => self.rng.tail(&[(45, 1, 3), (30, 4, 15), (15, 16, 60), (8, 61, 150), (2, 151, 320)]),
            Kind::Place => self.rng.tail(&[(40, 1, 5), (35, 6, 40), (20, 41, 120), (5, 121, 320)]),
            Kind::Taxon => self.rng.tail(&[(60, 1, 3), (30, 4, 30), (10, 31, 200)]),
            Kind::Category => self.rng.tail(&[(30, 1, 3), (40, 4, 30), (30, 31, 150)]),
            Kind::Event | Kind::Astro | Kind::Generic => {
                self.rng.tail(&[(55, 1, 3), (30, 4, 20), (12, 21, 80), (3, 81, 300)])
            }
        } as usize;
        let mut langs = Vec::new();
        let english = !self.rng.pct(6);
        self.pick_langs(labels, english, &mut langs);
        let salt = self.rng.next_u64();
        for (i, &l) in langs.iter().enumerate() {
            let text = self.localized(name, l, salt.wrapping_add(i as u64 * 13));
            self.plan.labels.push((l, text));
        }
        // Descriptions: bots write them for whole classes in dozens of languages.
        let (en, descs): (String, usize) = match kind {
            Kind::Article => {
                let y = self.rng.range(1900, 2024);
                let m = self.rng.below(12) as usize;
                let d = self.rng.range(1, 28);
                (
                    format!("scientific article published on {d} {} {y}", MONTHS_EN[m]),
                    self.rng.tail(&[(50, 1, 3), (50, 10, 35)]) as usize,
                )
            }
            Kind::Human => {
                let b = self.rng.range(1700, 2000);
                (
                    format!(
                        "{} {} ({b}\u{2013}{})",
                        self.rng.pick(WORDS),
                        self.rng.pick(WORDS),
                        b + self.rng.range(20, 95)
                    ),
                    self.rng.tail(&[(70, 1, 3), (25, 4, 20), (5, 21, 80)]) as usize,
                )
            }
            Kind::Place => (
                format!(
                    "{} in {}",
                    self.rng.pick(&["village", "city", "town", "mountain", "lake", "river", "commune"]),
                    self.syllable_word(2, 3)
                ),
                self.rng.tail(&[(50, 1, 5), (50, 6, 60)]) as usize,
            ),
            Kind::Taxon => ("species of insect".to_string(), self.rng.tail(&[(50, 1, 5), (50, 20, 60)]) as usize),
            Kind::Category => (
                if self.rng.pct(60) {
                    "Wikimedia category".to_string()
                } else {
                    "Wikimedia disambiguation page".to_string()
                },
                self.rng.tail(&[(20, 1, 10), (40, 30, 120), (40, 121, 250)]) as usize,
            ),
            Kind::Event | Kind::Astro | Kind::Generic => {
                let n = self.rng.range(2, 5);
                (self.words(n), self.rng.tail(&[(60, 0, 2), (35, 3, 20), (5, 21, 60)]) as usize)
            }
        };
        self.pick_langs(descs, true, &mut langs);
        for &l in &langs {
            let text = self.phrase(&en, l);
            self.plan.descriptions.push((l, text));
        }
        // Aliases: mostly none, a long tail.
        let aliases = self.rng.tail(&[(70, 0, 0), (22, 1, 3), (7, 4, 15), (1, 16, 60)]) as usize;
        for i in 0..aliases {
            let (l, _) = self.plan.labels[self.rng.below(self.plan.labels.len() as u64) as usize];
            let base = match i % 3 {
                0 => self.syllable_word(2, 4),
                1 => format!("{} {}", self.syllable_word(1, 2), name),
                _ => name.to_uppercase(),
            };
            let text = self.localized(&base, l, i as u64 * 7 + 3);
            self.plan.aliases.push((l, text));
        }
    }

    fn plan_sitelinks(&mut self, kind: Kind, name: &str) {
        let n = match kind {
            Kind::Article | Kind::Event => self.rng.tail(&[(97, 0, 0), (3, 1, 2)]),
            Kind::Human => self.rng.tail(&[(50, 0, 0), (30, 1, 5), (15, 6, 40), (5, 41, 200)]),
            Kind::Place => self.rng.tail(&[(20, 0, 0), (50, 1, 4), (25, 5, 40), (5, 41, 250)]),
            Kind::Taxon => self.rng.tail(&[(30, 0, 0), (60, 1, 4), (10, 5, 30)]),
            Kind::Category => self.rng.tail(&[(10, 0, 0), (60, 1, 5), (30, 6, 80)]),
            Kind::Astro | Kind::Generic => self.rng.tail(&[(60, 0, 0), (30, 1, 5), (10, 6, 60)]),
        } as usize;
        let mut taken: Vec<(u16, u8)> = Vec::new();
        for i in 0..n {
            let l = self.w.wiki_langs[self.w.wiki_weights.sample(&mut self.rng)];
            let project = if self.rng.pct(85) { 0 } else { self.rng.range(1, PROJECTS.len() as u64 - 1) as u8 };
            if taken.contains(&(l, project)) {
                continue;
            }
            taken.push((l, project));
            let title = self.localized(name, l, i as u64 * 11 + 5);
            let badge = if self.rng.pct(2) { *self.rng.pick(&[17437796, 17437798, 17559452]) } else { 0 };
            self.plan.sitelinks.push((l, project, title, badge));
        }
    }

    // ------------------------------------------------------------------ values

    fn time(&mut self, lo: i64, hi: i64, free: bool) -> Time {
        let mut year = self.rng.irange(lo, hi);
        let mut precision = *self.rng.pick(&[11, 11, 11, 11, 11, 11, 10, 9, 9, 9, 8, 7]);
        if free {
            // Years before 1 (XSD 1.1: 0 is 1 BCE), beyond 9999 and deep time.
            let x = self.rng.below(1_000_000);
            if x < 8_000 {
                year = -self.rng.irange(1, 9999);
                precision = *self.rng.pick(&[9, 9, 8, 7, 6]);
            } else if x < 8_800 {
                year = 0;
                precision = 9;
            } else if x < 10_300 {
                // Deep time, to the age of the universe, rounded to the precision.
                precision = self.rng.range(0, 5) as u8;
                let unit = 10i64.pow(9 - precision as u32);
                year = -self.rng.irange(1, 13_798_000_000 / unit) * unit;
            } else if x < 12_300 {
                // The far future, up to Wikibase's largest year.
                precision = self.rng.range(3, 9) as u8;
                let unit = 10i64.pow(9 - precision as u32);
                year = self.rng.irange(10_000 / unit + 1, 292_277_024 / unit) * unit;
            }
        }
        let (month, day) = match precision {
            11 => (self.rng.range(1, 12) as u8, self.rng.range(1, 28) as u8),
            10 => (self.rng.range(1, 12) as u8, 1),
            _ => (1, 1),
        };
        let julian = year < 1583 && self.rng.pct(60);
        let t = Time { year, month, day, precision, julian };
        if year < 1 {
            self.ent.dates_before_year_1 += 1;
        }
        if year > 9999 {
            self.ent.dates_after_9999 += 1;
        }
        t
    }

    fn retrieved(&mut self) -> Val {
        // Bots retrieve on a few thousand days: these value nodes recur across the dump.
        let day = self.rng.below(4000) as i64;
        let year = 2013 + day / 336;
        let month = (day % 336) / 28 + 1;
        Val::Time(Time { year, month: month as u8, day: (day % 28 + 1) as u8, precision: 11, julian: false })
    }

    fn quantity(&mut self, prop_id: u32) -> Quantity {
        let (amount, unit, normalized, bound) = match prop_id {
            1082 | 1128 | 1120 => {
                (Dec { mantissa: self.rng.range(0, 40_000_000) as i128, scale: 0 }, 199, None, self.rng.pct(5))
            }
            2046 => {
                let scale = self.rng.range(0, 4) as u8;
                (
                    Dec { mantissa: self.rng.range(1, 9_000_000) as i128, scale },
                    712226,
                    Some((25343, 6)),
                    self.rng.pct(10),
                )
            }
            2044 => (Dec { mantissa: self.rng.irange(-430, 8848) as i128, scale: 0 }, 11573, Some((11573, 0)), false),
            2048 | 2043 => {
                let scale = self.rng.range(0, 4) as u8;
                let (unit, exp) = *self.rng.pick(&[(11573, 0), (174728, -2), (828224, 3)]);
                (
                    Dec { mantissa: self.rng.range(1, 300_000) as i128, scale },
                    unit,
                    Some((11573, exp)),
                    self.rng.pct(15),
                )
            }
            2067 => {
                // Up to astronomical masses: 30 digits.
                let digits = self.rng.range(1, 30) as u32;
                let m = self.rng.range(1, 999) as i128 * 10i128.pow(digits.saturating_sub(3));
                (Dec { mantissa: m, scale: self.rng.range(0, 3) as u8 }, 11570, Some((11570, 0)), self.rng.pct(20))
            }
            2583 => {
                (Dec { mantissa: self.rng.range(1, 10_000_000_000) as i128, scale: 2 }, 531, None, self.rng.pct(30))
            }
            _ => {
                let neg = self.rng.pct(8);
                let m = self.rng.range(0, 100_000) as i128;
                let scale = self.rng.range(0, 5) as u8;
                (Dec { mantissa: if neg { -m } else { m }, scale }, 199, None, self.rng.pct(10))
            }
        };
        let bound =
            if bound { Some(Dec { mantissa: self.rng.range(1, 50) as i128, scale: amount.scale }) } else { None };
        if amount.mantissa < 0 {
            self.ent.decimals_negative += 1;
        }
        Quantity { amount, bound, unit, normalized }
    }

    fn globe(&mut self) -> Globe {
        let scale = *self.rng.pick(&[0, 2, 4, 5, 6, 9, 12, 12, 13, 14]) as u8;
        let unit = 10i64.pow(scale as u32);
        let lat = self.rng.irange(-90 * unit, 90 * unit);
        let lon = self.rng.irange(-180 * unit, 180 * unit);
        let precision = *self.rng.pick(&[
            "2.7777777777778E-5",
            "0.00027777777777778",
            "1.0E-5",
            "0.0001",
            "0.001",
            "0.01",
            "0.1",
            "1",
            "2.7777777777778E-7",
        ]);
        let globe = if self.rng.ppm(15_000) { *self.rng.pick(&[405, 111, 308, 3303, 3123, 15034]) } else { 2 };
        if globe != 2 {
            self.ent.wkt_other_globe += 1;
        }
        Globe { lat, lon, scale, precision, globe }
    }

    /// An external identifier of the property's shape; now and then with a stray `%`.
    fn ext_id(&mut self, p: u16) -> String {
        let shape = self.w.props[p as usize].shape;
        let mut s = String::new();
        match shape {
            IdShape::Digits(lo, hi) => {
                let n = self.rng.range(lo as u64, hi as u64);
                for _ in 0..n {
                    s.push((b'0' + self.rng.below(10) as u8) as char);
                }
            }
            IdShape::Prefixed(prefix, n) => {
                s.push_str(prefix);
                for _ in 0..n {
                    s.push((b'0' + self.rng.below(10) as u8) as char);
                }
            }
            IdShape::Alnum(lo, hi) => {
                const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
                for _ in 0..self.rng.range(lo as u64, hi as u64) {
                    s.push(*self.rng.pick(A) as char);
                }
            }
            IdShape::Slug => {
                let n = self.rng.range(1, 4);
                s = self.words(n).replace(' ', "-");
            }
            IdShape::Uuid => {
                let mut b = Vec::new();
                push_guid(&mut b, self.rng.next_u64(), self.rng.next_u64(), false);
                s = String::from_utf8(b).expect("hex");
            }
            IdShape::Path => {
                s = format!("{}/{}-{}", self.rng.pick(WORDS), self.syllable_word(2, 3), self.syllable_word(2, 3));
            }
            IdShape::Doi => {
                s = format!("10.{}/{}", self.rng.range(1000, 99999), self.words(2).to_uppercase().replace(' ', "-"));
                s.push('.');
                s.push_str(&self.rng.range(1, 99999).to_string());
            }
            IdShape::Gnd => {
                s = self.rng.range(100_000_000, 999_999_999).to_string();
                if self.rng.pct(10) {
                    s.push('X');
                }
            }
            IdShape::Isni => {
                for g in 0..4 {
                    if g > 0 {
                        s.push(' ');
                    }
                    s.push_str(&format!("{:04}", self.rng.below(10_000)));
                }
            }
            IdShape::Freebase => {
                s = format!("/m/0{}", self.rng.range(1000, 99_999_999));
            }
        }
        if self.w.props[p as usize].formatter.is_some() && self.rng.ppm(self.w.cfg.bad_iri_ppm) {
            self.break_percent(&mut s);
        }
        s
    }

    /// A bad percent-encoding as real identifiers and URLs have them: a bare `%`, `%` and
    /// letters that are not hex digits, a JavaScript `%u` escape, a cut escape.
    fn break_percent(&mut self, s: &mut String) {
        let bad = *self.rng.pick(&["%", "%zz", "%u00e9", "%2", "%G1", "100%25%"]);
        let at = s.len() / 2;
        let at = (0..=at).rev().find(|&i| s.is_char_boundary(i)).unwrap_or(0);
        s.insert_str(at, bad);
    }

    fn url(&mut self) -> String {
        let tld = *self.rng.pick(&["org", "com", "net", "de", "fr", "co.uk", "gov", "edu", "jp", "ru"]);
        let mut u = format!(
            "{}://www.{}{}.{tld}/{}/{}",
            if self.rng.pct(70) { "https" } else { "http" },
            self.rng.pick(WORDS),
            self.rng.pick(WORDS),
            self.rng.pick(WORDS),
            self.syllable_word(2, 4).to_lowercase()
        );
        match self.rng.below(10) {
            0 => u.push_str(&format!("?id={}&lang=en", self.rng.below(1_000_000))),
            1 => u.push_str(".html#section"),
            2 => u.push('/'),
            3 if self.rng.pct(10) => u.push_str("/M\u{fc}ller_\u{e9}t\u{e9}"),
            _ => {}
        }
        if self.rng.ppm(self.w.cfg.bad_iri_ppm) {
            self.break_percent(&mut u);
        }
        u
    }

    fn value_for(&mut self, p: u16, free_dates: bool) -> Val {
        let prop = &self.w.props[p as usize];
        let (dtype, id) = (prop.dtype, prop.id);
        match dtype {
            DType::Item => Val::Item(match id {
                21 => *self.rng.pick(&[6581097, 6581072, 1052281]),
                105 => *self.rng.pick(&[7432, 34740, 35409, 36602]),
                _ => self.any_item(),
            }),
            DType::ExternalId => Val::Ext(self.ext_id(p)),
            DType::Str => Val::Str(match id {
                1545 => self.rng.range(1, 40).to_string(),
                478 | 433 => self.rng.range(1, 300).to_string(),
                304 => {
                    let a = self.rng.range(1, 2000);
                    format!("{a}-{}", a + self.rng.range(1, 30))
                }
                2093 => format!("{} {}", self.syllable_word(1, 3), self.syllable_word(2, 3)),
                _ => {
                    let n = self.rng.range(1, 3);
                    self.words(n)
                }
            }),
            DType::Monolingual => {
                let l = if self.rng.pct(70) { 0 } else { self.w.langs.sample(&mut self.rng) as u16 };
                let n = self.rng.range(2, 8);
                let text = self.words(n);
                Val::Mono(self.phrase(&text, l), l)
            }
            DType::Time => Val::Time(match id {
                569 => self.time(1600, 2010, true),
                570 => self.time(1650, 2024, true),
                577 => self.time(1800, 2024, false),
                813 => return self.retrieved(),
                _ => self.time(1000, 2030, free_dates),
            }),
            DType::Quantity => Val::Quantity(self.quantity(id)),
            DType::Globe => Val::Globe(self.globe()),
            DType::Url => Val::Url(self.url()),
            DType::Commons => Val::Commons(format!(
                "{} {}.{}",
                self.syllable_word(2, 4),
                self.words(2),
                self.rng.pick(&["jpg", "JPG", "png", "svg", "tif"])
            )),
        }
    }

    // ------------------------------------------------------------------ statements

    fn add(&mut self, prop_id: u32, val: Val) -> usize {
        let p = self.w.p(prop_id);
        self.add_p(p, val)
    }

    fn add_p(&mut self, prop: u16, val: Val) -> usize {
        let rank = match self.rng.below(1000) {
            0..=24 => Rank::Preferred,
            25..=31 => Rank::Deprecated,
            _ => Rank::Normal,
        };
        // Some value and no value, rarely.
        let val = match self.rng.below(10_000) {
            0..=29 => Val::Some(digest(&self.rng.next_u64().to_le_bytes())),
            30..=49 => Val::No,
            _ => val,
        };
        let guid = (self.rng.next_u64(), self.rng.next_u64(), self.rng.pct(70));
        self.plan.stmts.push(Stmt { prop, val, rank, best: false, quals: Vec::new(), refs: Vec::new(), guid });
        let i = self.plan.stmts.len() - 1;
        if rank == Rank::Deprecated && self.rng.pct(50) {
            let reason = Val::Item(*self.rng.pick(&[25895909, 41755623, 21441764]));
            self.qual(i, 2241, reason);
        }
        i
    }

    fn qual(&mut self, i: usize, prop_id: u32, val: Val) {
        let p = self.w.p(prop_id);
        self.plan.stmts[i].quals.push((p, val));
    }

    fn cite(&mut self, i: usize, r: u16) {
        if !self.plan.stmts[i].refs.contains(&r) {
            self.plan.stmts[i].refs.push(r);
        }
    }

    fn new_ref(&mut self, snaks: Vec<(u16, Val)>) -> u16 {
        self.plan.refs.push(snaks);
        (self.plan.refs.len() - 1) as u16
    }

    /// "Imported from Wikimedia project": the same few references all over the dump.
    fn imported_ref(&mut self) -> u16 {
        let wiki = *self.rng.pick(WIKI_ITEMS);
        let snaks = vec![(self.w.p(143), Val::Item(wiki))];
        self.new_ref(snaks)
    }

    fn stated_ref(&mut self) -> u16 {
        let db = *self.rng.pick(STATED_IN);
        let mut snaks = vec![(self.w.p(248), Val::Item(db))];
        if self.rng.pct(60) {
            let p = self.w.ext_props[self.w.ext_weights.sample(&mut self.rng)];
            snaks.push((p, Val::Ext(self.ext_id(p))));
        }
        if self.rng.pct(30) {
            snaks.push((self.w.p(407), Val::Item(*self.rng.pick(&[1860, 150, 188, 1321]))));
        }
        let r = self.retrieved();
        snaks.push((self.w.p(813), r));
        self.new_ref(snaks)
    }

    fn url_ref(&mut self) -> u16 {
        let mut snaks = vec![(self.w.p(854), Val::Url(self.url()))];
        if self.rng.pct(50) {
            let n = self.rng.range(2, 7);
            snaks.push((self.w.p(1476), Val::Mono(self.words(n), 0)));
        }
        if self.rng.pct(20) {
            snaks.push((self.w.p(123), Val::Item(self.any_item())));
        }
        let r = self.retrieved();
        snaks.push((self.w.p(813), r));
        if self.rng.pct(15) {
            snaks.push((
                self.w.p(1065),
                Val::Url(format!(
                    "https://web.archive.org/web/2009{:010}/{}",
                    self.rng.below(10_000_000_000),
                    self.url()
                )),
            ));
            let d = self.retrieved();
            snaks.push((self.w.p(2960), d));
        }
        self.new_ref(snaks)
    }

    /// References for the entity's statements: a few per entity, cited by many of them.
    fn attach_refs(&mut self, share: u32) {
        let n = self.plan.stmts.len();
        if n == 0 {
            return;
        }
        let pool: Vec<u16> = (0..self.rng.range(1, 4))
            .map(|_| match self.rng.below(10) {
                0..=3 => self.imported_ref(),
                4..=7 => self.stated_ref(),
                _ => self.url_ref(),
            })
            .collect();
        for i in 0..n {
            if self.rng.pct(share) {
                let r = *self.rng.pick(&pool);
                self.cite(i, r);
                if self.rng.pct(15) {
                    let r2 = *self.rng.pick(&pool);
                    self.cite(i, r2);
                }
            }
        }
    }

    fn ext_ids(&mut self, count: u32) {
        let mut used: Vec<u16> = Vec::new();
        for _ in 0..count {
            let p = self.w.ext_props[self.w.ext_weights.sample(&mut self.rng)];
            if used.contains(&p) {
                continue;
            }
            used.push(p);
            let v = Val::Ext(self.ext_id(p));
            self.add_p(p, v);
            if self.rng.pct(3) {
                let v2 = Val::Ext(self.ext_id(p));
                self.add_p(p, v2);
            }
        }
    }

    fn plan_statements(&mut self, kind: Kind, name: &str) {
        match kind {
            Kind::Article => self.plan_article(name),
            Kind::Human => self.plan_human(name),
            Kind::Place => self.plan_place(),
            Kind::Taxon => self.plan_taxon(name),
            Kind::Category => {
                self.add(31, Val::Item(if name.starts_with("Category:") { 4167836 } else { 4167410 }));
                if self.rng.pct(30) {
                    let q = self.any_item();
                    self.add(301, Val::Item(q));
                }
            }
            Kind::Event => self.plan_event(),
            Kind::Astro => self.plan_astro(),
            Kind::Generic => self.plan_generic(),
        }
    }

    /// A scholarly article: title, authors, journal, citations.
    fn plan_article(&mut self, name: &str) {
        self.add(31, Val::Item(13442814));
        let l = 0;
        self.add(1476, Val::Mono(name.to_string(), l));
        let authors = self.rng.tail(&[(50, 0, 3), (40, 4, 10), (10, 11, 40)]);
        let named = self.rng.below(authors as u64 + 1) as u32;
        for a in 0..authors {
            let i = if a < named {
                let q = self.any_item();
                self.add(50, Val::Item(q))
            } else {
                let s = format!("{} {}", self.syllable_word(1, 3), self.syllable_word(2, 3));
                self.add(2093, Val::Str(s))
            };
            self.qual(i, 1545, Val::Str((a + 1).to_string()));
            if self.rng.pct(5) {
                let s = self.syllable_word(2, 3);
                self.qual(i, 1810, Val::Str(s));
            }
        }
        let t = self.time(1800, 2024, false);
        self.add(577, Val::Time(t));
        let j = self.any_item();
        self.add(1433, Val::Item(j));
        for p in [478, 433, 304] {
            if self.rng.pct(70) {
                let v = self.value_for(self.w.p(p), false);
                self.add(p, v);
            }
        }
        for p in [356, 698, 932] {
            if self.rng.pct(75) {
                let v = Val::Ext(self.ext_id(self.w.p(p)));
                self.add(p, v);
            }
        }
        let cites = self.rng.tail(&[(60, 0, 0), (27, 1, 15), (11, 16, 50), (2, 51, 150)]);
        for _ in 0..cites {
            let q = self.any_item();
            self.add(2860, Val::Item(q));
        }
        for _ in 0..self.rng.range(0, 3) {
            let q = self.any_item();
            self.add(921, Val::Item(q));
        }
        self.attach_refs(70);
    }

    /// A person: birth and death, occupations, education, images, identifiers.
    fn plan_human(&mut self, name: &str) {
        self.add(31, Val::Item(5));
        let v = self.value_for(self.w.p(21), false);
        self.add(21, v);
        for p in [27, 19, 735, 734] {
            if self.rng.pct(70) {
                let v = self.value_for(self.w.p(p), false);
                self.add(p, v);
            }
        }
        let birth = self.time(1600, 2010, true);
        let i = self.add(569, Val::Time(birth));
        if self.rng.pct(4) {
            let t = self.time(1600, 2010, true);
            self.qual(i, 1319, Val::Time(t));
        }
        if self.rng.pct(55) {
            let t = self.time(1650, 2024, true);
            self.add(570, Val::Time(t));
            let q = self.any_item();
            self.add(20, Val::Item(q));
        }
        for _ in 0..self.rng.range(1, 4) {
            let q = self.any_item();
            self.add(106, Val::Item(q));
        }
        for _ in 0..self.rng.range(0, 3) {
            let q = self.any_item();
            let i = self.add(69, Val::Item(q));
            if self.rng.pct(40) {
                let s = self.time(1800, 2020, false);
                self.qual(i, 580, Val::Time(s));
                let e = self.time(1800, 2024, false);
                self.qual(i, 582, Val::Time(e));
            }
        }
        if self.rng.pct(20) {
            let q = self.any_item();
            self.add(166, Val::Item(q));
        }
        if self.rng.pct(25) {
            let v = self.value_for(self.w.p(18), false);
            let i = self.add(18, v);
            if self.rng.pct(30) {
                let t = self.time(1900, 2024, false);
                self.qual(i, 585, Val::Time(t));
                for _ in 0..self.rng.range(1, 8) {
                    let l = self.w.langs.sample(&mut self.rng) as u16;
                    let text = self.phrase(name, l);
                    self.qual(i, 2096, Val::Mono(text, l));
                }
            }
        }
        for p in [373, 856, 1412] {
            if self.rng.pct(15) {
                let v = self.value_for(self.w.p(p), false);
                self.add(p, v);
            }
        }
        for p in [214, 227, 244, 213, 268, 269, 646] {
            if self.rng.pct(45) {
                let v = Val::Ext(self.ext_id(self.w.p(p)));
                self.add(p, v);
            }
        }
        let n = self.rng.tail(&[(60, 0, 3), (32, 4, 15), (8, 16, 60)]);
        self.ext_ids(n);
        self.attach_refs(55);
    }

    /// A place: country, coordinates, population over time, identifiers.
    fn plan_place(&mut self) {
        let class = *self.rng.pick(&[486972, 532, 515, 3957, 8502, 23397, 4022, 484170]);
        self.add(31, Val::Item(class));
        for p in [17, 131] {
            let q = self.any_item();
            self.add(p, Val::Item(q));
        }
        let g = self.globe();
        self.add(625, Val::Globe(g));
        for _ in 0..self.rng.tail(&[(50, 0, 1), (40, 2, 6), (10, 7, 25)]) {
            let pop = self.quantity(1082);
            let i = self.add(1082, Val::Quantity(pop));
            let t = self.time(1800, 2024, false);
            self.qual(i, 585, Val::Time(t));
            if self.rng.pct(40) {
                let q = self.any_item();
                self.qual(i, 459, Val::Item(q));
            }
        }
        for p in [2046, 2044, 421] {
            if self.rng.pct(50) {
                let v = self.value_for(self.w.p(p), false);
                self.add(p, v);
            }
        }
        if self.rng.pct(60) {
            let v = Val::Ext(self.ext_id(self.w.p(1566)));
            self.add(1566, v);
        }
        if self.rng.pct(30) {
            let v = self.value_for(self.w.p(18), false);
            self.add(18, v);
        }
        let n = self.rng.tail(&[(70, 0, 2), (30, 3, 15)]);
        self.ext_ids(n);
        self.attach_refs(50);
    }

    /// A taxon: rank, parent, name, identifiers.
    fn plan_taxon(&mut self, name: &str) {
        self.add(31, Val::Item(16521));
        let v = self.value_for(self.w.p(105), false);
        self.add(105, v);
        let q = self.any_item();
        self.add(171, Val::Item(q));
        self.add(225, Val::Str(name.to_string()));
        for p in [685, 846, 830] {
            if self.rng.pct(60) {
                let v = Val::Ext(self.ext_id(self.w.p(p)));
                self.add(p, v);
            }
        }
        let n = self.rng.tail(&[(60, 0, 3), (40, 4, 20)]);
        self.ext_ids(n);
        if self.rng.pct(20) {
            let v = self.value_for(self.w.p(18), false);
            self.add(18, v);
        }
        self.attach_refs(65);
    }

    /// An event: start, end, points in time, what it is part of.
    fn plan_event(&mut self) {
        let q = self.any_item();
        self.add(31, Val::Item(q));
        let s = self.time(-5000, 2030, true);
        let i = self.add(580, Val::Time(s));
        if self.rng.pct(20) {
            let q = self.any_item();
            self.qual(i, 642, Val::Item(q));
        }
        let e = self.time(-5000, 2100, true);
        self.add(582, Val::Time(e));
        for _ in 0..self.rng.range(0, 4) {
            let t = self.time(-10000, 3000, true);
            self.add(585, Val::Time(t));
        }
        for _ in 0..self.rng.range(0, 4) {
            let q = self.any_item();
            self.add(361, Val::Item(q));
        }
        self.attach_refs(60);
    }

    /// An astronomical object: mass, distance, length, discovery.
    fn plan_astro(&mut self) {
        let q = *self.rng.pick(&[523, 3863, 318, 1931185, 83373]);
        self.add(31, Val::Item(q));
        for p in [2067, 2583, 2043] {
            if self.rng.pct(70) {
                let v = Val::Quantity(self.quantity(p));
                self.add(p, v);
            }
        }
        let t = self.time(1600, 2024, true);
        self.add(575, Val::Time(t));
        if self.rng.pct(40) {
            let g = self.globe();
            self.add(625, Val::Globe(g));
        }
        let n = self.rng.tail(&[(60, 0, 3), (40, 4, 12)]);
        self.ext_ids(n);
        self.attach_refs(60);
    }

    /// Any other item: a class and properties drawn by their weights.
    fn plan_generic(&mut self) {
        let q = *self.rng.pick(POPULAR_CLASSES);
        let class = if self.rng.pct(50) { q } else { self.any_item() };
        self.add(31, Val::Item(class));
        let n = self.rng.tail(&[(50, 1, 5), (35, 6, 20), (15, 21, 60)]);
        let mut props: Vec<u16> =
            (0..n).map(|_| self.w.generic_props[self.w.generic_weights.sample(&mut self.rng)]).collect();
        props.sort_unstable();
        for p in props {
            let v = self.value_for(p, true);
            let i = self.add_p(p, v);
            if self.rng.pct(15) {
                let qp = self.w.generic_props[self.w.generic_weights.sample(&mut self.rng)];
                if !matches!(self.w.props[qp as usize].dtype, DType::ExternalId) {
                    let qv = self.value_for(qp, true);
                    self.plan.stmts[i].quals.push((qp, qv));
                }
            }
        }
        self.attach_refs(50);
    }

    /// BestRank: per property, the preferred statements if any, else the normal ones.
    fn mark_best(&mut self) {
        // Statements grouped by property, in the order the properties first appear.
        let mut first: Vec<(u16, usize)> = Vec::new();
        for (i, s) in self.plan.stmts.iter().enumerate() {
            if !first.iter().any(|f| f.0 == s.prop) {
                first.push((s.prop, i));
            }
        }
        self.plan.stmts.sort_by_key(|s| first.iter().find(|f| f.0 == s.prop).map_or(0, |f| f.1));
        let stmts = &mut self.plan.stmts;
        let mut i = 0;
        while i < stmts.len() {
            let mut j = i;
            while j < stmts.len() && stmts[j].prop == stmts[i].prop {
                j += 1;
            }
            let preferred = stmts[i..j].iter().any(|s| s.rank == Rank::Preferred);
            for s in &mut stmts[i..j] {
                s.best = if preferred { s.rank == Rank::Preferred } else { s.rank == Rank::Normal };
            }
            i = j;
        }
    }

    // ------------------------------------------------------------------ writing

    fn data_block(&mut self, letter: u8, id: u64, statements: u64, item_counts: Option<(u64, u64)>) {
        let t = &mut self.t;
        push_name(t.s(), b"data:", letter, id);
        t.po(b"a", b"schema:Dataset");
        t.p().extend_from_slice(b"schema:about");
        push_name(t.o(), b"wd:", letter, id);
        t.po(b"cc:license", b"<http://creativecommons.org/publicdomain/zero/1.0/>");
        t.po(b"schema:softwareVersion", b"\"1.0.0\"");
        t.p().extend_from_slice(b"schema:version");
        push_int(t.o(), self.rng.range(100_000_000, 2_100_000_000));
        t.p().extend_from_slice(b"schema:dateModified");
        let b = t.o();
        b.push(b'"');
        push_u64(b, self.rng.range(2013, 2024));
        b.push(b'-');
        push_padded(b, self.rng.range(1, 12), 2);
        b.push(b'-');
        push_padded(b, self.rng.range(1, 28), 2);
        b.push(b'T');
        push_padded(b, self.rng.below(24), 2);
        b.push(b':');
        push_padded(b, self.rng.below(60), 2);
        b.push(b':');
        push_padded(b, self.rng.below(60), 2);
        b.extend_from_slice(b"Z\"^^xsd:dateTime");
        t.p().extend_from_slice(b"wikibase:statements");
        push_int(t.o(), statements);
        if let Some((sitelinks, identifiers)) = item_counts {
            t.p().extend_from_slice(b"wikibase:sitelinks");
            push_int(t.o(), sitelinks);
            t.p().extend_from_slice(b"wikibase:identifiers");
            push_int(t.o(), identifiers);
        }
        t.end();
    }

    fn write_item(&mut self, q: u64) {
        self.vals.truncate(0, 0);
        self.refs.truncate(0, 0);
        self.seen_vals.clear();
        self.seen_refs.clear();
        let plan = std::mem::take(&mut self.plan);
        let identifiers =
            plan.stmts.iter().filter(|s| self.w.props[s.prop as usize].dtype == DType::ExternalId).count() as u64;
        self.data_block(b'Q', q, plan.stmts.len() as u64, Some((plan.sitelinks.len() as u64, identifiers)));
        push_name(self.t.s(), b"wd:", b'Q', q);
        self.t.po(b"a", b"wikibase:Item");
        self.t.end();
        self.write_sitelinks(q, &plan);
        self.write_statements(b'Q', q, &plan);
        self.write_terms(b'Q', q, &plan);
        self.flush_pending();
        self.ent.statements += plan.stmts.len() as u64;
        self.ent.labels += plan.labels.len() as u64;
        self.ent.descriptions += plan.descriptions.len() as u64;
        self.ent.aliases += plan.aliases.len() as u64;
        self.ent.sitelinks += plan.sitelinks.len() as u64;
    }

    fn flush_pending(&mut self) {
        self.t.buf.extend_from_slice(&self.vals.buf);
        self.t.triples += self.vals.triples;
        self.t.buf.extend_from_slice(&self.refs.buf);
        self.t.triples += self.refs.triples;
        self.vals.buf.clear();
        self.vals.triples = 0;
        self.refs.buf.clear();
        self.refs.triples = 0;
    }

    fn write_sitelinks(&mut self, q: u64, plan: &Plan) {
        for (lang, project, title, badge) in &plan.sitelinks {
            let code = LANGUAGES[*lang as usize].0;
            let (host, group) = PROJECTS[*project as usize];
            let t = &mut self.t;
            let b = t.s();
            b.extend_from_slice(b"<https://");
            b.extend_from_slice(code.as_bytes());
            b.push(b'.');
            b.extend_from_slice(host.as_bytes());
            b.extend_from_slice(b"/wiki/");
            push_pct(b, title, b"_");
            b.push(b'>');
            t.po(b"a", b"schema:Article");
            t.p().extend_from_slice(b"schema:about");
            push_name(t.o(), b"wd:", b'Q', q);
            t.p().extend_from_slice(b"schema:inLanguage");
            push_str(t.o(), code);
            t.p().extend_from_slice(b"schema:isPartOf");
            let b = t.o();
            b.extend_from_slice(b"<https://");
            b.extend_from_slice(code.as_bytes());
            b.push(b'.');
            b.extend_from_slice(host.as_bytes());
            b.extend_from_slice(b"/>");
            t.p().extend_from_slice(b"schema:name");
            push_lang(t.o(), title, code);
            if *badge != 0 {
                t.p().extend_from_slice(b"wikibase:badge");
                push_name(t.o(), b"wd:", b'Q', *badge);
                self.ent.badges += 1;
            }
            t.end();
            let b = t.s();
            b.extend_from_slice(b"<https://");
            b.extend_from_slice(code.as_bytes());
            b.push(b'.');
            b.extend_from_slice(host.as_bytes());
            b.extend_from_slice(b"/>");
            t.p().extend_from_slice(b"wikibase:wikiGroup");
            push_str(t.o(), group);
            t.end();
        }
    }

    fn write_statements(&mut self, letter: u8, id: u64, plan: &Plan) {
        let skolem = self.w.cfg.skolem;
        // Truthy: the best statements' simple values.
        let mut truthy = false;
        let mut prev: Option<u16> = None;
        for s in plan.stmts.iter().filter(|s| s.best) {
            let prop = &self.w.props[s.prop as usize];
            if !truthy {
                push_name(self.t.s(), b"wd:", letter, id);
                truthy = true;
            }
            self.ent.truthy += 1;
            match &s.val {
                Val::No => {
                    self.t.p().extend_from_slice(b"a");
                    push_name(self.t.o(), b"wdno:", b'P', prop.id as u64);
                    prev = None;
                    continue;
                }
                Val::Ext(x) if prop.formatter.is_some() => {
                    push_name(self.t.p(), b"wdt:", b'P', prop.id as u64);
                    push_str(self.t.o(), x);
                    push_name(self.t.p(), b"wdtn:", b'P', prop.id as u64);
                    push_normalized_id(self.t.o(), prop, x);
                    prev = None;
                    continue;
                }
                _ => {}
            }
            if prev != Some(s.prop) {
                push_name(self.t.p(), b"wdt:", b'P', prop.id as u64);
            }
            push_simple(self.t.o(), &s.val, skolem);
            prev = Some(s.prop);
        }
        for (n, s) in plan.stmts.iter().enumerate() {
            let pid = self.w.props[s.prop as usize].id as u64;
            if !(n == 0 && truthy) {
                push_name(self.t.s(), b"wd:", letter, id);
            }
            push_name(self.t.p(), b"p:", b'P', pid);
            let b = self.t.o();
            b.extend_from_slice(b"s:");
            push_name(b, b"", letter, id);
            b.push(b'-');
            push_guid(b, s.guid.0, s.guid.1, s.guid.2);
            self.t.end();
            self.write_statement_node(letter, id, s, &plan.refs);
        }
    }

    fn write_statement_node(&mut self, letter: u8, id: u64, s: &Stmt, refs: &[Vec<(u16, Val)>]) {
        let skolem = self.w.cfg.skolem;
        let prop = &self.w.props[s.prop as usize];
        let pid = prop.id as u64;
        let b = self.t.s();
        b.extend_from_slice(b"s:");
        push_name(b, b"", letter, id);
        b.push(b'-');
        push_guid(b, s.guid.0, s.guid.1, s.guid.2);
        self.t.p().extend_from_slice(b"a");
        self.t.o().extend_from_slice(b"wikibase:Statement");
        if s.best {
            self.t.o().extend_from_slice(b"wikibase:BestRank");
        }
        if s.val == Val::No {
            push_name(self.t.o(), b"wdno:", b'P', pid);
            self.ent.novalue += 1;
        }
        self.t.p().extend_from_slice(b"wikibase:rank");
        self.t.o().extend_from_slice(match s.rank {
            Rank::Normal => b"wikibase:NormalRank",
            Rank::Preferred => {
                self.ent.preferred += 1;
                b"wikibase:PreferredRank"
            }
            Rank::Deprecated => {
                self.ent.deprecated += 1;
                b"wikibase:DeprecatedRank"
            }
        });
        if s.val != Val::No {
            push_name(self.t.p(), b"ps:", b'P', pid);
            push_simple(self.t.o(), &s.val, skolem);
            if let Val::Some(_) = s.val {
                self.ent.somevalue += 1;
                self.ent.blank_nodes += if s.best { 2 } else { 1 };
            }
            self.full_value(b"psv:", b"psn:", s.prop, &s.val);
        }
        for (qp, qv) in &s.quals {
            let qid = self.w.props[*qp as usize].id as u64;
            push_name(self.t.p(), b"pq:", b'P', qid);
            push_simple(self.t.o(), qv, skolem);
            self.full_value(b"pqv:", b"pqn:", *qp, qv);
            self.ent.qualifiers += 1;
        }
        if !s.refs.is_empty() {
            let hashes: Vec<[u64; 3]> = s.refs.iter().map(|&r| self.reference(&refs[r as usize])).collect();
            self.t.p().extend_from_slice(b"prov:wasDerivedFrom");
            for h in hashes {
                let b = self.t.o();
                b.extend_from_slice(b"ref:");
                push_hex(b, &h, 40);
                self.ent.references += 1;
            }
        }
        self.t.end();
    }

    /// psv:/pqv:/prv: to the value node (and psn:/pqn:/prn: to the normalized one), or the
    /// normalized IRI of an external identifier, written into the open statement of `self.t`.
    fn full_value(&mut self, value_prefix: &[u8], norm_prefix: &[u8], p: u16, v: &Val) {
        let prop = &self.w.props[p as usize];
        let pid = prop.id as u64;
        match v {
            Val::Time(_) | Val::Globe(_) | Val::Quantity(_) => {
                let (h, norm) = self.value_node(v);
                push_name(self.t.p(), value_prefix, b'P', pid);
                let b = self.t.o();
                b.extend_from_slice(b"v:");
                push_hex(b, &h, 32);
                if let Some(n) = norm {
                    push_name(self.t.p(), norm_prefix, b'P', pid);
                    let b = self.t.o();
                    b.extend_from_slice(b"v:");
                    push_hex(b, &n, 32);
                }
            }
            Val::Ext(x) if prop.formatter.is_some() => {
                push_name(self.t.p(), norm_prefix, b'P', pid);
                push_normalized_id(self.t.o(), prop, x);
            }
            _ => {}
        }
    }

    /// The value node of a time, quantity or coordinate (once per entity, as the dump does);
    /// returns its hash and, for a normalized quantity, the normalized node's.
    fn value_node(&mut self, v: &Val) -> ([u64; 3], Option<[u64; 3]>) {
        let mut norm = None;
        if let Val::Quantity(q) = v {
            if let Some((unit, exp)) = q.normalized {
                let nq = Quantity {
                    amount: q.amount.shift(exp),
                    bound: q.bound.map(|b| b.shift(exp)),
                    unit,
                    normalized: None,
                };
                let h = self.emit_value_node(&Val::Quantity(nq), Some(None));
                norm = Some(h);
            }
        }
        let h = self.emit_value_node(v, norm.map(Some));
        (h, norm)
    }

    /// `normalized`: None (no normalization line), Some(None) (normalized to itself),
    /// Some(Some(h)) (normalized to node h).
    fn emit_value_node(&mut self, v: &Val, normalized: Option<Option<[u64; 3]>>) -> [u64; 3] {
        let mut body = Vec::with_capacity(256);
        let (class, triples) = value_body(&mut body, v);
        let h = value_digest(&body);
        if self.seen_vals.contains(&h) {
            return h;
        }
        self.seen_vals.push(h);
        let b = &mut self.vals.buf;
        b.extend_from_slice(b"v:");
        push_hex(b, &h, 32);
        b.extend_from_slice(b" a ");
        b.extend_from_slice(class);
        b.extend_from_slice(&body);
        let mut n = triples + 1;
        if let Some(target) = normalized {
            b.extend_from_slice(b" ;\n\twikibase:quantityNormalized v:");
            push_hex(b, &target.unwrap_or(h), 32);
            n += 1;
        }
        b.extend_from_slice(b" .\n\n");
        self.vals.triples += n;
        match v {
            Val::Time(_) => self.ent.value_nodes_time += 1,
            Val::Quantity(_) => self.ent.value_nodes_quantity += 1,
            _ => self.ent.value_nodes_globe += 1,
        }
        h
    }

    /// A reference node (once per entity; the hash is its content's, so equal references in
    /// different entities are the same node, written again in each).
    fn reference(&mut self, snaks: &[(u16, Val)]) -> [u64; 3] {
        let mut body = Ttl::new(256);
        body.s();
        let skolem = self.w.cfg.skolem;
        let mut extra: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        for (p, v) in snaks {
            let prop = &self.w.props[*p as usize];
            push_name(body.p(), b"pr:", b'P', prop.id as u64);
            push_simple(body.o(), v, skolem);
            match v {
                Val::Time(_) | Val::Quantity(_) | Val::Globe(_) => {
                    let (h, norm) = self.value_node(v);
                    push_name(body.p(), b"prv:", b'P', prop.id as u64);
                    let b = body.o();
                    b.extend_from_slice(b"v:");
                    push_hex(b, &h, 32);
                    if let Some(n) = norm {
                        let mut pn = Vec::new();
                        push_name(&mut pn, b"prn:", b'P', prop.id as u64);
                        let mut on = b"v:".to_vec();
                        push_hex(&mut on, &n, 32);
                        extra.push((pn, on));
                    }
                }
                Val::Ext(x) if prop.formatter.is_some() => {
                    push_name(body.p(), b"prn:", b'P', prop.id as u64);
                    push_normalized_id(body.o(), prop, x);
                }
                _ => {}
            }
        }
        for (p, o) in extra {
            body.po(&p, &o);
        }
        let h = digest(&body.buf);
        if self.seen_refs.contains(&h) {
            return h;
        }
        self.seen_refs.push(h);
        let b = &mut self.refs.buf;
        b.extend_from_slice(b"ref:");
        push_hex(b, &h, 40);
        b.extend_from_slice(b" a wikibase:Reference ;\n\t");
        // body.buf starts with the first predicate (after its leading space).
        b.extend_from_slice(&body.buf[1..]);
        b.extend_from_slice(b" .\n\n");
        self.refs.triples += body.triples + 1;
        self.ent.reference_nodes += 1;
        h
    }

    fn write_terms(&mut self, letter: u8, id: u64, plan: &Plan) {
        if plan.labels.is_empty() && plan.descriptions.is_empty() && plan.aliases.is_empty() {
            return;
        }
        let t = &mut self.t;
        push_name(t.s(), b"wd:", letter, id);
        for (l, text) in &plan.labels {
            let code = LANGUAGES[*l as usize].0;
            for p in [&b"rdfs:label"[..], b"skos:prefLabel", b"schema:name"] {
                t.p().extend_from_slice(p);
                push_lang(t.o(), text, code);
            }
        }
        if !plan.descriptions.is_empty() {
            t.p().extend_from_slice(b"schema:description");
            for (l, text) in &plan.descriptions {
                push_lang(t.o(), text, LANGUAGES[*l as usize].0);
            }
        }
        if !plan.aliases.is_empty() {
            t.p().extend_from_slice(b"skos:altLabel");
            for (l, text) in &plan.aliases {
                push_lang(t.o(), text, LANGUAGES[*l as usize].0);
            }
        }
        t.end();
    }

    // ------------------------------------------------------------------ lexemes

    fn lexeme(&mut self) {
        let l = self.next_l;
        self.next_l += self.rng.range(1, 2);
        self.plan = Plan::default();
        self.seen_vals.clear();
        self.seen_refs.clear();
        let lemma = self.syllable_word(1, 3).to_lowercase();
        let lang = if self.rng.pct(80) { self.w.langs.sample(&mut self.rng) as u16 } else { 0 };
        let code = LANGUAGES[lang as usize].0.to_string();
        // A second spelling now and then, in a language without a code of its own:
        // `mis-x-Q…`, whose private-use subtag BCP 47 limits to 8 characters.
        let variant = if self.rng.pct(6) {
            let mut tag = "mis-x-".to_string();
            let q = match self.rng.below(3) {
                0 => self.rng.range(1000, 999_999),
                1 => self.rng.range(1_000_000, 9_999_999),
                _ => self.rng.range(10_000_000, 130_000_000),
            };
            push_q_text(&mut tag, q);
            Some((tag, format!("{lemma}h")))
        } else {
            None
        };
        let forms = self.rng.tail(&[(30, 1, 1), (50, 2, 6), (20, 7, 30)]) as u64;
        let senses = self.rng.tail(&[(20, 0, 0), (60, 1, 2), (20, 3, 6)]) as u64;
        let has_stmt = self.rng.pct(40);
        self.data_block(b'L', l, has_stmt as u64, None);
        let t = &mut self.t;
        push_name(t.s(), b"wd:", b'L', l);
        t.p().extend_from_slice(b"a");
        t.o().extend_from_slice(b"wikibase:Lexeme");
        t.o().extend_from_slice(b"ontolex:LexicalEntry");
        t.p().extend_from_slice(b"rdfs:label");
        push_lang(t.o(), &lemma, &code);
        t.p().extend_from_slice(b"wikibase:lemma");
        push_lang(t.o(), &lemma, &code);
        if let Some((tag, spelling)) = &variant {
            push_lang(t.o(), spelling, tag);
            t.p().extend_from_slice(b"rdfs:label");
            push_lang(t.o(), spelling, tag);
        }
        t.p().extend_from_slice(b"dct:language");
        push_name(t.o(), b"wd:", b'Q', [1860, 188, 150, 1321, 652, 7737, 5287, 9035][lang as usize % 8]);
        t.p().extend_from_slice(b"wikibase:lexicalCategory");
        push_name(t.o(), b"wd:", b'Q', *self.rng.pick(&[1084, 24905, 34698, 380057, 147276]));
        t.p().extend_from_slice(b"ontolex:lexicalForm");
        for f in 1..=forms {
            let b = t.o();
            push_name(b, b"wd:", b'L', l);
            b.extend_from_slice(b"-F");
            push_u64(b, f);
        }
        if senses > 0 {
            t.p().extend_from_slice(b"ontolex:sense");
            for s in 1..=senses {
                let b = t.o();
                push_name(b, b"wd:", b'L', l);
                b.extend_from_slice(b"-S");
                push_u64(b, s);
            }
        }
        let guid = (self.rng.next_u64(), self.rng.next_u64(), false);
        let oed = self.rng.range(10_000, 999_999).to_string();
        if has_stmt {
            t.p().extend_from_slice(b"wdt:P5275");
            push_str(t.o(), &oed);
            t.p().extend_from_slice(b"p:P5275");
            let b = t.o();
            b.extend_from_slice(b"s:");
            push_name(b, b"", b'L', l);
            b.push(b'-');
            push_guid(b, guid.0, guid.1, false);
        }
        t.end();
        if has_stmt {
            let b = t.s();
            b.extend_from_slice(b"s:");
            push_name(b, b"", b'L', l);
            b.push(b'-');
            push_guid(b, guid.0, guid.1, false);
            t.p().extend_from_slice(b"a");
            t.o().extend_from_slice(b"wikibase:Statement");
            t.o().extend_from_slice(b"wikibase:BestRank");
            t.po(b"wikibase:rank", b"wikibase:NormalRank");
            t.p().extend_from_slice(b"ps:P5275");
            push_str(t.o(), &oed);
            t.end();
            self.ent.statements += 1;
        }
        for f in 1..=forms {
            self.lexeme_form(l, f, &lemma, &code);
        }
        for s in 1..=senses {
            self.lexeme_sense(l, s);
        }
        self.ent.lexemes += 1;
        self.ent.forms += forms;
        self.ent.senses += senses;
    }

    /// Form `f` of lexeme `l`: a spelling of the lemma, and its grammatical features.
    fn lexeme_form(&mut self, l: u64, f: u64, lemma: &str, code: &str) {
        let form = format!("{lemma}{}", ["", "s", "en", "e", "er", "ed", "ing", "es"][(f % 8) as usize]);
        let t = &mut self.t;
        let b = t.s();
        push_name(b, b"wd:", b'L', l);
        b.extend_from_slice(b"-F");
        push_u64(b, f);
        t.p().extend_from_slice(b"a");
        t.o().extend_from_slice(b"wikibase:Form");
        t.o().extend_from_slice(b"ontolex:Form");
        t.p().extend_from_slice(b"rdfs:label");
        push_lang(t.o(), &form, code);
        t.p().extend_from_slice(b"ontolex:representation");
        push_lang(t.o(), &form, code);
        let features = self.rng.range(0, 3);
        if features > 0 {
            let t = &mut self.t;
            t.p().extend_from_slice(b"wikibase:grammaticalFeature");
            for _ in 0..features {
                let q = *self.rng.pick(&[110786, 146786, 192613, 1230649, 51929074, 179230]);
                push_name(self.t.o(), b"wd:", b'Q', q);
            }
        }
        self.t.end();
    }

    /// Sense `s` of lexeme `l`: its glosses, and the item it stands for now and then.
    fn lexeme_sense(&mut self, l: u64, s: u64) {
        let glosses = self.rng.range(1, 4);
        let mut langs = Vec::new();
        self.pick_langs(glosses as usize, true, &mut langs);
        let n = self.rng.range(1, 6);
        let gloss_en = self.words(n);
        let with_item = self.rng.pct(50);
        let item = self.any_item();
        let sguid = (self.rng.next_u64(), self.rng.next_u64(), false);
        let glosses: Vec<(u16, String)> = langs.iter().map(|&g| (g, self.phrase(&gloss_en, g))).collect();
        let t = &mut self.t;
        let b = t.s();
        push_name(b, b"wd:", b'L', l);
        b.extend_from_slice(b"-S");
        push_u64(b, s);
        t.p().extend_from_slice(b"a");
        t.o().extend_from_slice(b"wikibase:Sense");
        t.o().extend_from_slice(b"ontolex:LexicalSense");
        for (g, text) in &glosses {
            let gc = LANGUAGES[*g as usize].0;
            t.p().extend_from_slice(b"rdfs:label");
            push_lang(t.o(), text, gc);
            t.p().extend_from_slice(b"skos:definition");
            push_lang(t.o(), text, gc);
        }
        let sid = |b: &mut Vec<u8>| {
            b.extend_from_slice(b"s:");
            push_name(b, b"", b'L', l);
            b.extend_from_slice(b"-S");
            push_u64(b, s);
            b.push(b'-');
            push_guid(b, sguid.0, sguid.1, false);
        };
        if with_item {
            t.p().extend_from_slice(b"wdt:P5137");
            push_name(t.o(), b"wd:", b'Q', item);
            t.p().extend_from_slice(b"p:P5137");
            sid(t.o());
        }
        t.end();
        if with_item {
            sid(t.s());
            t.p().extend_from_slice(b"a");
            t.o().extend_from_slice(b"wikibase:Statement");
            t.o().extend_from_slice(b"wikibase:BestRank");
            t.po(b"wikibase:rank", b"wikibase:NormalRank");
            t.p().extend_from_slice(b"ps:P5137");
            push_name(t.o(), b"wd:", b'Q', item);
            t.end();
            self.ent.statements += 1;
        }
    }

    // ------------------------------------------------------------------ properties

    fn property(&mut self, p: u16) {
        let prop = &self.w.props[p as usize];
        let (pid, dtype) = (prop.id as u64, prop.dtype);
        let normalized = prop.formatter.is_some();
        let label = prop.label.clone();
        self.data_block(b'P', pid, 0, None);
        let mut langs = Vec::new();
        let n = self.rng.tail(&[(50, 1, 10), (40, 11, 60), (10, 61, 200)]) as usize;
        self.pick_langs(n, true, &mut langs);
        let t = &mut self.t;
        push_name(t.s(), b"wd:", b'P', pid);
        t.po(b"a", b"wikibase:Property");
        for (i, &l) in langs.iter().enumerate() {
            let text = if i == 0 { label.clone() } else { self.phrase(&label, l) };
            let code = LANGUAGES[l as usize].0;
            let t = &mut self.t;
            for pr in [&b"rdfs:label"[..], b"skos:prefLabel", b"schema:name"] {
                t.p().extend_from_slice(pr);
                push_lang(t.o(), &text, code);
            }
        }
        let t = &mut self.t;
        t.p().extend_from_slice(b"wikibase:propertyType");
        let b = t.o();
        b.extend_from_slice(b"wikibase:");
        b.extend_from_slice(dtype.wikibase_type().as_bytes());
        let links: &[(&[u8], &[u8])] = &[
            (b"wikibase:directClaim", b"wdt:"),
            (b"wikibase:claim", b"p:"),
            (b"wikibase:statementProperty", b"ps:"),
            (b"wikibase:statementValue", b"psv:"),
            (b"wikibase:qualifier", b"pq:"),
            (b"wikibase:qualifierValue", b"pqv:"),
            (b"wikibase:reference", b"pr:"),
            (b"wikibase:referenceValue", b"prv:"),
            (b"wikibase:novalue", b"wdno:"),
        ];
        let norm_links: &[(&[u8], &[u8])] = &[
            (b"wikibase:directClaimNormalized", b"wdtn:"),
            (b"wikibase:statementValueNormalized", b"psn:"),
            (b"wikibase:qualifierValueNormalized", b"pqn:"),
            (b"wikibase:referenceValueNormalized", b"prn:"),
        ];
        let all = links.iter().chain(if normalized { norm_links.iter() } else { [].iter() });
        for (pred, prefix) in all.clone() {
            t.p().extend_from_slice(pred);
            push_name(t.o(), prefix, b'P', pid);
        }
        t.end();
        // The OWL declarations of each predicate.
        for (_, prefix) in all {
            if *prefix == b"wdno:" {
                continue;
            }
            let object = dtype.object_valued()
                || matches!(*prefix, b"p:" | b"psv:" | b"pqv:" | b"prv:")
                || (normalized && matches!(*prefix, b"wdtn:" | b"psn:" | b"pqn:" | b"prn:"));
            push_name(t.s(), prefix, b'P', pid);
            t.po(b"a", if object { b"owl:ObjectProperty" } else { b"owl:DatatypeProperty" });
            t.end();
        }
        // wdno:P is the class of entities without a value: the complement of a restriction,
        // a blank node.
        let bnode = digest(format!("novalue/P{pid}").as_bytes());
        push_name(t.s(), b"wdno:", b'P', pid);
        t.po(b"a", b"owl:Class");
        t.p().extend_from_slice(b"owl:complementOf");
        push_blank(t.o(), &bnode, self.w.cfg.skolem);
        t.end();
        push_blank(t.s(), &bnode, self.w.cfg.skolem);
        t.po(b"a", b"owl:Restriction");
        t.p().extend_from_slice(b"owl:onProperty");
        push_name(t.o(), b"wdt:", b'P', pid);
        t.p().extend_from_slice(b"owl:someValuesFrom");
        t.o().extend_from_slice(if dtype.object_valued() { b"owl:Thing" } else { b"rdfs:Literal" });
        t.end();
        self.ent.properties += 1;
        self.ent.blank_nodes += 2;
    }

    // ------------------------------------------------------------------ the exact end

    /// An item of at most `r` triples (r >= 13): its data block, type and a few labels.
    fn small_item(&mut self, r: u64) {
        let q = self.new_q();
        self.last_subject = Some(q);
        let room = r - 13;
        let labels = 1 + self.rng.below(4).min(room / 3);
        let descriptions = self.rng.below(3).min(room - (labels - 1) * 3);
        self.data_block(b'Q', q, 0, Some((0, 0)));
        push_name(self.t.s(), b"wd:", b'Q', q);
        self.t.po(b"a", b"wikibase:Item");
        self.t.end();
        let name = self.base_name(Kind::Generic);
        let mut langs = Vec::new();
        self.pick_langs(labels as usize, true, &mut langs);
        let t = &mut self.t;
        push_name(t.s(), b"wd:", b'Q', q);
        for &l in &langs {
            let code = LANGUAGES[l as usize].0;
            for p in [&b"rdfs:label"[..], b"skos:prefLabel", b"schema:name"] {
                t.p().extend_from_slice(p);
                push_lang(t.o(), &name, code);
            }
        }
        if descriptions > 0 {
            t.p().extend_from_slice(b"schema:description");
            for &l in langs.iter().take(descriptions as usize) {
                push_lang(t.o(), "Wikimedia list article", LANGUAGES[l as usize].0);
            }
        }
        t.end();
        self.ent.items += 1;
        self.ent.kind_small += 1;
        self.ent.labels += labels;
        self.ent.descriptions += descriptions.min(langs.len() as u64);
    }

    /// Exactly `r` more triples: aliases of the last item written (or of a new one).
    fn filler(&mut self, r: u64) {
        let q = match self.last_subject {
            Some(q) => q,
            None => {
                let q = self.new_q();
                self.last_subject = Some(q);
                q
            }
        };
        let t = &mut self.t;
        push_name(t.s(), b"wd:", b'Q', q);
        t.p().extend_from_slice(b"skos:altLabel");
        for i in 0..r {
            let b = t.o();
            b.extend_from_slice(b"\"alias ");
            push_u64(b, i + 1);
            b.extend_from_slice(b"\"@en");
        }
        t.end();
        self.stats.aliases += r;
    }
}

fn count(haystack: &[u8], needle: &[u8]) -> u64 {
    haystack.windows(needle.len()).filter(|w| *w == needle).count() as u64
}

/// A name in another script, letter by letter (syllable by syllable in syllabic scripts).
fn transliterate(name: &str, script: Script, salt: u64) -> String {
    let (base, len) = script.letters();
    let step = if script.syllabic() { 2 } else { 1 };
    let mut out = String::with_capacity(name.len() * 2);
    let mut acc = 0u32;
    let mut n = 0u32;
    for (i, c) in name.chars().enumerate() {
        if c == ' ' || c == '-' || c == ':' || c == '"' || c == '\\' {
            out.push(c);
            continue;
        }
        acc = acc.wrapping_mul(31).wrapping_add(c as u32);
        n += 1;
        if !n.is_multiple_of(step) {
            continue;
        }
        let off = (acc.wrapping_add((salt % 1024) as u32).wrapping_add(i as u32 * 7)) % len;
        // Now and then a CJK character outside the BMP (four bytes in UTF-8).
        let cp = if script == Script::Han && off.is_multiple_of(251) { 0x20000 + off } else { base + off };
        out.push(char::from_u32(cp).unwrap_or('?'));
    }
    if out.trim().is_empty() {
        out.push(char::from_u32(base).unwrap_or('?'));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn world(triples: u64, skolem: bool) -> World {
        World::new(Config { seed: 7, triples, shards: 4, skolem, bad_iri_ppm: 50_000 })
    }

    #[test]
    fn a_segment_has_exactly_its_budget_and_is_reproducible() {
        for triples in [1, 12, 13, 500, 40_000, 100_000] {
            let w = world(triples, false);
            let mut total = 0;
            for k in 0..w.layout.segments {
                let (text, stats) = segment(&w, k);
                assert_eq!(stats.triples, w.layout.budget(triples, k), "segment {k} of {triples}");
                assert_eq!(text, segment(&w, k).0);
                assert!(std::str::from_utf8(&text).is_ok());
                total += stats.triples;
            }
            assert_eq!(total, triples);
        }
    }

    #[test]
    fn shards_repeat_the_header_and_the_prefixes() {
        let w = world(200_000, false);
        assert!(w.layout.segments >= 4 && w.layout.shards == 4);
        let starts = (0..w.layout.segments).filter(|&k| w.layout.starts_shard(k)).count();
        assert_eq!(starts, 4);
        let (first, _) = segment(&w, 0);
        assert!(first.starts_with(b"@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> ."));
        let (second, _) = segment(&w, 1);
        assert!(!second.starts_with(b"@prefix"));
    }

    #[test]
    fn the_shapes_are_there() {
        let w = world(300_000, false);
        let mut all = Stats::default();
        let mut text = Vec::new();
        for k in 0..w.layout.segments {
            let (t, s) = segment(&w, k);
            all.add(&s);
            text.extend_from_slice(&t);
        }
        let text = String::from_utf8(text).unwrap();
        for needle in [
            "wikibase:BestRank",
            "wikibase:PreferredRank",
            "wikibase:DeprecatedRank",
            "prov:wasDerivedFrom ref:",
            "a wikibase:TimeValue",
            "a wikibase:QuantityValue",
            "a wikibase:GlobecoordinateValue",
            "^^geo:wktLiteral",
            "wikibase:quantityNormalized v:",
            "\"-",
            "a wikibase:Lexeme",
            "ontolex:representation",
            "skos:definition",
            "a schema:Article",
            "wikibase:wikiGroup",
            "@zh-classical",
            "wdtn:P",
            "a wdno:P",
            "_:",
            "owl:complementOf",
        ] {
            assert!(text.contains(needle), "no {needle}");
        }
        assert!(all.dates_before_year_1 > 0 && all.dates_after_9999 > 0, "{all:?}");
        assert!(all.bad_iris > 0 && all.lang_not_bcp47 > 0 && all.somevalue > 0, "{all:?}");
        let skolem = world(300_000, true);
        let (t, _) = segment(&skolem, 0);
        assert!(!String::from_utf8(t).unwrap().contains("_:"));
    }

    #[test]
    fn transliteration_stays_in_its_script() {
        let s = transliterate("Douglas Adams", Script::Cyrillic, 3);
        assert!(s.chars().all(|c| c == ' ' || ('\u{430}'..='\u{44F}').contains(&c)), "{s}");
        let h = transliterate("Douglas Adams", Script::Han, 3);
        assert!(h.chars().count() < "Douglas Adams".len());
    }
}

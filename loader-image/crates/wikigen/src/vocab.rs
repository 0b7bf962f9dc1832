//! The fixed vocabulary: the dump's prefixes, Wikimedia's language codes with their scripts,
//! sites, the property catalogue and the words that names and descriptions are made of.

use crate::rng::{Rng, Weighted};

/// The dump's prefix block, as `latest-all.ttl` writes it at the start of every chunk.
pub const PREFIXES: &str = "@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
@prefix ontolex: <http://www.w3.org/ns/lemon/ontolex#> .
@prefix dct: <http://purl.org/dc/terms/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix wikibase: <http://wikiba.se/ontology#> .
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
@prefix schema: <http://schema.org/> .
@prefix cc: <http://creativecommons.org/ns#> .
@prefix geo: <http://www.opengis.net/ont/geosparql#> .
@prefix prov: <http://www.w3.org/ns/prov#> .
@prefix wd: <http://www.wikidata.org/entity/> .
@prefix data: <https://www.wikidata.org/wiki/Special:EntityData/> .
@prefix s: <http://www.wikidata.org/entity/statement/> .
@prefix ref: <http://www.wikidata.org/reference/> .
@prefix v: <http://www.wikidata.org/value/> .
@prefix wdt: <http://www.wikidata.org/prop/direct/> .
@prefix wdtn: <http://www.wikidata.org/prop/direct-normalized/> .
@prefix p: <http://www.wikidata.org/prop/> .
@prefix ps: <http://www.wikidata.org/prop/statement/> .
@prefix psv: <http://www.wikidata.org/prop/statement/value/> .
@prefix psn: <http://www.wikidata.org/prop/statement/value-normalized/> .
@prefix pq: <http://www.wikidata.org/prop/qualifier/> .
@prefix pqv: <http://www.wikidata.org/prop/qualifier/value/> .
@prefix pqn: <http://www.wikidata.org/prop/qualifier/value-normalized/> .
@prefix pr: <http://www.wikidata.org/prop/reference/> .
@prefix prv: <http://www.wikidata.org/prop/reference/value/> .
@prefix prn: <http://www.wikidata.org/prop/reference/value-normalized/> .
@prefix wdno: <http://www.wikidata.org/prop/novalue/> .
";

/// A writing system: names in it are made of code points from these ranges.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Script {
    Latin,
    Cyrillic,
    Greek,
    Arabic,
    Hebrew,
    Han,
    Kana,
    Hangul,
    Devanagari,
    Bengali,
    Tamil,
    Telugu,
    Kannada,
    Malayalam,
    Gujarati,
    Gurmukhi,
    Oriya,
    Sinhala,
    Thai,
    Lao,
    Khmer,
    Myanmar,
    Georgian,
    Armenian,
    Ethiopic,
    Tibetan,
    Nko,
    Thaana,
    Syllabics,
}

impl Script {
    /// First code point and number of letters used; syllabic scripts take one letter per syllable.
    pub fn letters(self) -> (u32, u32) {
        use Script::*;
        match self {
            Latin => (u32::from(b'a'), 26),
            Cyrillic => (0x430, 32),
            Greek => (0x3B1, 25),
            Arabic => (0x628, 34),
            Hebrew => (0x5D0, 27),
            Han => (0x4E00, 20_000),
            Kana => (0x30A2, 82),
            Hangul => (0xAC00, 11_000),
            Devanagari => (0x915, 37),
            Bengali => (0x995, 37),
            Tamil => (0xB95, 37),
            Telugu => (0xC15, 37),
            Kannada => (0xC95, 37),
            Malayalam => (0xD15, 37),
            Gujarati => (0xA95, 37),
            Gurmukhi => (0xA15, 37),
            Oriya => (0xB15, 37),
            Sinhala => (0xD9A, 44),
            Thai => (0xE01, 46),
            Lao => (0xE81, 45),
            Khmer => (0x1780, 35),
            Myanmar => (0x1000, 33),
            Georgian => (0x10D0, 33),
            Armenian => (0x561, 38),
            Ethiopic => (0x1200, 300),
            Tibetan => (0xF40, 42),
            Nko => (0x7CA, 33),
            Thaana => (0x780, 38),
            Syllabics => (0x1401, 600),
        }
    }

    pub fn syllabic(self) -> bool {
        matches!(self, Script::Han | Script::Kana | Script::Hangul | Script::Ethiopic | Script::Syllabics)
    }
}

/// Wikimedia's language codes as Wikidata uses them for labels, descriptions, aliases and
/// monolingual text, roughly in order of use. `zh-classical` is grammatical Turtle but not BCP 47
/// (a subtag of 9 letters): Jena keeps it with a warning.
#[rustfmt::skip]
pub const LANGUAGES: &[(&str, Script)] = {
    use Script::*;
    &[
        ("en", Latin), ("fr", Latin), ("de", Latin), ("es", Latin), ("it", Latin), ("nl", Latin), ("ru", Cyrillic),
        ("pt", Latin), ("ja", Kana), ("zh", Han), ("pl", Latin), ("sv", Latin), ("ar", Arabic), ("uk", Cyrillic),
        ("ca", Latin), ("ast", Latin), ("mul", Latin), ("cs", Latin), ("fa", Arabic), ("he", Hebrew), ("hu", Latin),
        ("fi", Latin), ("ko", Hangul), ("id", Latin), ("da", Latin), ("nb", Latin), ("tr", Latin), ("ro", Latin),
        ("en-gb", Latin), ("gl", Latin), ("eu", Latin), ("sq", Latin), ("zh-hans", Han), ("zh-hant", Han),
        ("el", Greek), ("ms", Latin), ("vi", Latin), ("sr", Cyrillic), ("bg", Cyrillic), ("hy", Armenian),
        ("ka", Georgian), ("sk", Latin), ("sl", Latin), ("hr", Latin), ("et", Latin), ("lv", Latin), ("lt", Latin),
        ("bn", Bengali), ("hi", Devanagari), ("ta", Tamil), ("te", Telugu), ("ur", Arabic), ("th", Thai),
        ("nn", Latin), ("be", Cyrillic), ("be-tarask", Cyrillic), ("mk", Cyrillic), ("eo", Latin), ("oc", Latin),
        ("br", Latin), ("cy", Latin), ("ga", Latin), ("is", Latin), ("af", Latin), ("sw", Latin), ("tl", Latin),
        ("ceb", Latin), ("war", Latin), ("az", Latin), ("kk", Cyrillic), ("uz", Latin), ("ky", Cyrillic),
        ("tg", Cyrillic), ("tt", Cyrillic), ("ba", Cyrillic), ("cv", Cyrillic), ("ce", Cyrillic), ("os", Cyrillic),
        ("mn", Cyrillic), ("arz", Arabic), ("ary", Arabic), ("azb", Arabic), ("ckb", Arabic), ("ps", Arabic),
        ("pnb", Arabic), ("sd", Arabic), ("ug", Arabic), ("yi", Hebrew), ("pt-br", Latin), ("en-ca", Latin),
        ("en-us", Latin), ("de-ch", Latin), ("de-at", Latin), ("fr-ca", Latin), ("es-419", Latin), ("zh-cn", Han),
        ("zh-tw", Han), ("zh-hk", Han), ("zh-sg", Han), ("zh-mo", Han), ("zh-my", Han), ("yue", Han), ("wuu", Han),
        ("gan", Han), ("lzh", Han), ("zh-classical", Han), ("zh-min-nan", Latin), ("nan", Latin), ("hak", Han),
        ("cdo", Latin), ("ko-kp", Hangul), ("mr", Devanagari), ("ne", Devanagari), ("sa", Devanagari),
        ("mai", Devanagari), ("bho", Devanagari), ("new", Devanagari), ("dty", Devanagari), ("gom", Devanagari),
        ("as", Bengali), ("bpy", Bengali), ("kn", Kannada), ("tcy", Kannada), ("ml", Malayalam), ("gu", Gujarati),
        ("pa", Gurmukhi), ("or", Oriya), ("si", Sinhala), ("lo", Lao), ("km", Khmer), ("my", Myanmar),
        ("mnw", Myanmar), ("shn", Myanmar), ("xmf", Georgian), ("hyw", Armenian), ("am", Ethiopic), ("ti", Ethiopic),
        ("bo", Tibetan), ("dz", Tibetan), ("nqo", Nko), ("dv", Thaana), ("iu", Syllabics), ("ike-cans", Syllabics),
        ("cr", Syllabics), ("lb", Latin), ("fy", Latin), ("rm", Latin), ("wa", Latin), ("co", Latin), ("sc", Latin),
        ("vec", Latin), ("lmo", Latin), ("pms", Latin), ("nap", Latin), ("scn", Latin), ("lij", Latin),
        ("fur", Latin), ("eml", Latin), ("frp", Latin), ("an", Latin), ("ext", Latin), ("mwl", Latin), ("lad", Latin),
        ("ia", Latin), ("ie", Latin), ("io", Latin), ("vo", Latin), ("la", Latin), ("tk", Latin), ("ku", Latin),
        ("kaa", Latin), ("crh-latn", Latin), ("jv", Latin), ("su", Latin), ("mad", Latin), ("min", Latin),
        ("ban", Latin), ("bug", Latin), ("ace", Latin), ("ilo", Latin), ("pam", Latin), ("bcl", Latin),
        ("pag", Latin), ("yo", Latin), ("ig", Latin), ("ha", Latin), ("zu", Latin), ("xh", Latin), ("st", Latin),
        ("tn", Latin), ("ts", Latin), ("ss", Latin), ("ve", Latin), ("nso", Latin), ("so", Latin), ("om", Latin),
        ("rw", Latin), ("rn", Latin), ("lg", Latin), ("ln", Latin), ("kg", Latin), ("sg", Latin), ("wo", Latin),
        ("ff", Latin), ("bm", Latin), ("ee", Latin), ("tw", Latin), ("ak", Latin), ("fj", Latin), ("sm", Latin),
        ("to", Latin), ("mi", Latin), ("haw", Latin), ("ty", Latin), ("ht", Latin), ("gn", Latin), ("qu", Latin),
        ("ay", Latin), ("nah", Latin), ("mt", Latin), ("hsb", Latin), ("dsb", Latin), ("csb", Latin), ("szl", Latin),
        ("li", Latin), ("nds", Latin), ("nds-nl", Latin), ("vls", Latin), ("zea", Latin), ("stq", Latin),
        ("sco", Latin), ("ksh", Latin), ("bar", Latin), ("pfl", Latin), ("pdc", Latin), ("gsw", Latin),
        ("als", Latin), ("gd", Latin), ("kw", Latin), ("gv", Latin), ("fo", Latin), ("nl-informal", Latin),
        ("de-formal", Latin), ("sr-el", Latin), ("sr-ec", Cyrillic), ("sr-latn", Latin), ("tg-latn", Latin),
        ("tt-latn", Latin), ("ug-latn", Latin), ("kk-latn", Latin), ("kk-cyrl", Cyrillic), ("kk-arab", Arabic),
        ("ike-latn", Latin), ("shi-latn", Latin), ("ruq-latn", Latin), ("nan-latn-pehoeji", Latin),
        ("nan-latn-tailo", Latin), ("bat-smg", Latin), ("fiu-vro", Latin), ("roa-tara", Latin), ("map-bms", Latin),
        ("cbk-zam", Latin), ("simple", Latin), ("vep", Latin), ("vro", Latin), ("liv", Latin), ("kab", Latin),
        ("tok", Latin), ("lfn", Latin), ("nov", Latin), ("jbo", Latin), ("gor", Latin), ("bjn", Latin),
        ("nia", Latin), ("pcd", Latin), ("nrm", Latin), ("jam", Latin), ("srn", Latin), ("pap", Latin),
        ("kri", Latin), ("tpi", Latin), ("bi", Latin), ("ch", Latin), ("mh", Latin), ("na", Latin), ("gil", Latin),
        ("ms-arab", Arabic), ("glk", Arabic), ("mzn", Arabic), ("lrc", Arabic), ("bqi", Arabic), ("skr", Arabic),
        ("ks", Arabic), ("lez", Cyrillic), ("av", Cyrillic), ("mrj", Cyrillic), ("mhr", Cyrillic), ("udm", Cyrillic),
        ("kv", Cyrillic), ("koi", Cyrillic), ("myv", Cyrillic), ("mdf", Cyrillic), ("sah", Cyrillic),
        ("tyv", Cyrillic), ("bxr", Cyrillic), ("xal", Cyrillic), ("ab", Cyrillic), ("ady", Cyrillic),
        ("kbd", Cyrillic), ("krc", Cyrillic), ("inh", Cyrillic), ("lbe", Cyrillic), ("rue", Cyrillic), ("pnt", Greek),
        ("grc", Greek), ("awa", Devanagari), ("anp", Devanagari), ("hif", Latin), ("sat", Latin), ("guw", Latin),
        ("kbp", Latin), ("dag", Latin), ("fon", Latin), ("tum", Latin), ("ny", Latin), ("sn", Latin), ("nr", Latin),
        ("mg", Latin), ("ki", Latin), ("kl", Latin), ("se", Latin), ("smn", Latin), ("sms", Latin), ("olo", Latin),
        ("krl", Latin), ("hsn", Han), ("za", Latin), ("mni", Bengali), ("sgs", Latin), ("ltg", Latin), ("frr", Latin),
        ("it-x-tara", Latin),
    ]
};

/// Language weights: a Zipf-like fall by rank (1,000,000 / (rank + 2)), integers only.
pub fn language_weights() -> Weighted {
    Weighted::new((0..LANGUAGES.len() as u64).map(|i| 1_000_000 / (i + 2)))
}

/// Wikimedia projects that hold sitelinks: (site suffix, wikiGroup).
pub const PROJECTS: &[(&str, &str)] = &[
    ("wikipedia.org", "wikipedia"),
    ("wikiquote.org", "wikiquote"),
    ("wikisource.org", "wikisource"),
    ("wikivoyage.org", "wikivoyage"),
    ("wikinews.org", "wikinews"),
    ("wikibooks.org", "wikibooks"),
    ("wikiversity.org", "wikiversity"),
];

/// Syllables that Latin-script names are made of.
pub const SYLLABLES: &[&str] = &[
    "a", "ba", "be", "bo", "da", "de", "di", "do", "du", "el", "en", "fa", "fe", "ga", "go", "ha", "he", "hi", "ka",
    "ke", "ki", "ko", "la", "le", "li", "lo", "lu", "ma", "me", "mi", "mo", "na", "ne", "ni", "no", "nu", "o", "pa",
    "pe", "po", "ra", "re", "ri", "ro", "ru", "sa", "se", "si", "so", "ta", "te", "ti", "to", "tu", "va", "ve", "vi",
    "wa", "ya", "za", "an", "ar", "er", "in", "on", "us", "is", "ang", "ber", "dor", "gen", "han", "ker", "lin", "mar",
    "ner", "ost", "per", "ran", "sen", "tor", "ven", "wil", "zen", "ç", "é", "ö", "ü", "ñ", "ø", "ł", "ș",
];

pub const WORDS: &[&str] = &[
    "river",
    "house",
    "north",
    "stone",
    "valley",
    "church",
    "school",
    "green",
    "lake",
    "bridge",
    "castle",
    "field",
    "garden",
    "mountain",
    "island",
    "saint",
    "new",
    "old",
    "great",
    "little",
    "upper",
    "lower",
    "east",
    "west",
    "south",
    "hill",
    "forest",
    "park",
    "station",
    "street",
    "market",
    "mill",
    "port",
    "bay",
    "cross",
    "well",
    "protein",
    "gene",
    "cell",
    "analysis",
    "study",
    "effect",
    "model",
    "system",
    "theory",
    "method",
    "data",
    "network",
    "quantum",
    "climate",
    "species",
    "structure",
    "response",
    "cancer",
    "brain",
    "light",
    "energy",
    "history",
    "language",
    "music",
    "art",
    "law",
    "trade",
    "war",
    "peace",
    "city",
    "rural",
    "urban",
    "social",
];

pub const MONTHS_EN: &[&str] = &[
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// The kind of value a property takes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum DType {
    Item,
    ExternalId,
    Str,
    Monolingual,
    Time,
    Quantity,
    Globe,
    Url,
    Commons,
}

impl DType {
    /// `wikibase:propertyType`'s local name.
    pub fn wikibase_type(self) -> &'static str {
        match self {
            DType::Item => "WikibaseItem",
            DType::ExternalId => "ExternalId",
            DType::Str => "String",
            DType::Monolingual => "Monolingualtext",
            DType::Time => "Time",
            DType::Quantity => "Quantity",
            DType::Globe => "GlobeCoordinate",
            DType::Url => "Url",
            DType::Commons => "CommonsMedia",
        }
    }

    /// Values are IRIs (the owl class of wdt:/ps:/pq:/pr: is owl:ObjectProperty).
    pub fn object_valued(self) -> bool {
        matches!(self, DType::Item | DType::Url | DType::Commons)
    }
}

/// How an external identifier looks.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum IdShape {
    Digits(u8, u8),
    /// A prefix letter or two and digits (n80076765, nm0010930).
    Prefixed(&'static str, u8),
    Alnum(u8, u8),
    Slug,
    Uuid,
    Path,
    Doi,
    /// Digits with an X check character (GND).
    Gnd,
    /// Four groups of four digits separated by spaces (ISNI).
    Isni,
    /// Freebase's /m/0xxxx.
    Freebase,
}

pub struct Prop {
    pub id: u32,
    pub dtype: DType,
    pub label: String,
    /// The normalized IRI of an external identifier: the part before and after the id
    /// (wdtn:, psn:, pqn:, prn:).
    pub formatter: Option<(String, String)>,
    pub shape: IdShape,
}

fn real(id: u32, dtype: DType, label: &str) -> Prop {
    Prop { id, dtype, label: label.to_string(), formatter: None, shape: IdShape::Digits(4, 9) }
}

fn ext(id: u32, label: &str, shape: IdShape, formatter: Option<(&str, &str)>) -> Prop {
    Prop {
        id,
        dtype: DType::ExternalId,
        label: label.to_string(),
        formatter: formatter.map(|(a, b)| (a.to_string(), b.to_string())),
        shape,
    }
}

/// The property catalogue: Wikidata's most used properties (ids, types and formatters as in
/// the dumps), then a fixed set of further external-identifier properties, the long tail
/// (Wikidata has about 9,000 of them), made from a fixed seed so that every dump has them.
pub fn properties() -> Vec<Prop> {
    let mut v = most_used_properties();
    v.extend(well_known_identifiers());
    add_long_tail(&mut v);
    v
}

/// Wikidata's most used properties, by type.
fn most_used_properties() -> Vec<Prop> {
    use DType::*;
    vec![
        real(31, Item, "instance of"),
        real(279, Item, "subclass of"),
        real(21, Item, "sex or gender"),
        real(27, Item, "country of citizenship"),
        real(17, Item, "country"),
        real(131, Item, "located in the administrative territorial entity"),
        real(19, Item, "place of birth"),
        real(20, Item, "place of death"),
        real(106, Item, "occupation"),
        real(735, Item, "given name"),
        real(734, Item, "family name"),
        real(1412, Item, "languages spoken, written or signed"),
        real(69, Item, "educated at"),
        real(108, Item, "employer"),
        real(166, Item, "award received"),
        real(1433, Item, "published in"),
        real(50, Item, "author"),
        real(2860, Item, "cites work"),
        real(921, Item, "main subject"),
        real(407, Item, "language of work or name"),
        real(248, Item, "stated in"),
        real(143, Item, "imported from Wikimedia project"),
        real(105, Item, "taxon rank"),
        real(171, Item, "parent taxon"),
        real(421, Item, "located in time zone"),
        real(361, Item, "part of"),
        real(527, Item, "has part(s)"),
        real(136, Item, "genre"),
        real(495, Item, "country of origin"),
        real(642, Item, "of"),
        real(459, Item, "determination method"),
        real(518, Item, "applies to part"),
        real(3831, Item, "object has role"),
        real(1343, Item, "described by source"),
        real(910, Item, "topic's main category"),
        real(5137, Item, "item for this sense"),
        real(2241, Item, "reason for deprecated rank"),
        real(301, Item, "category's main topic"),
        real(887, Item, "based on heuristic"),
        real(123, Item, "publisher"),
        real(373, Str, "Commons category"),
        real(2093, Str, "author name string"),
        real(478, Str, "volume"),
        real(433, Str, "issue"),
        real(304, Str, "page(s)"),
        real(1545, Str, "series ordinal"),
        real(1810, Str, "subject named as"),
        real(225, Str, "taxon name"),
        real(742, Str, "pseudonym"),
        real(1476, Monolingual, "title"),
        real(1559, Monolingual, "name in native language"),
        real(1813, Monolingual, "short name"),
        real(2096, Monolingual, "media legend"),
        real(1448, Monolingual, "official name"),
        real(569, Time, "date of birth"),
        real(570, Time, "date of death"),
        real(577, Time, "publication date"),
        real(580, Time, "start time"),
        real(582, Time, "end time"),
        real(585, Time, "point in time"),
        real(571, Time, "inception"),
        real(576, Time, "dissolved, abolished or demolished date"),
        real(813, Time, "retrieved"),
        real(575, Time, "time of discovery or invention"),
        real(2960, Time, "archive date"),
        real(1319, Time, "earliest date"),
        real(1082, Quantity, "population"),
        real(2046, Quantity, "area"),
        real(2044, Quantity, "elevation above sea level"),
        real(2048, Quantity, "height"),
        real(2067, Quantity, "mass"),
        real(2583, Quantity, "distance from Earth"),
        real(2021, Quantity, "Erdős number"),
        real(1128, Quantity, "employees"),
        real(2043, Quantity, "length"),
        real(1120, Quantity, "number of deaths"),
        real(625, Globe, "coordinate location"),
        real(856, Url, "official website"),
        real(854, Url, "reference URL"),
        real(973, Url, "described at URL"),
        real(953, Url, "full work available at URL"),
        real(1065, Url, "archive URL"),
        real(4656, Url, "Wikimedia import URL"),
        real(18, Commons, "image"),
        real(109, Commons, "signature"),
        real(1442, Commons, "image of grave"),
        real(41, Commons, "flag image"),
        real(242, Commons, "locator map image"),
    ]
}

/// External identifiers Wikidata's items use most, with their shapes and formatters.
fn well_known_identifiers() -> Vec<Prop> {
    use IdShape::*;
    vec![
        ext(214, "VIAF ID", Digits(6, 12), Some(("http://viaf.org/viaf/", ""))),
        ext(227, "GND ID", Gnd, Some(("https://d-nb.info/gnd/", ""))),
        ext(
            244,
            "Library of Congress authority ID",
            Prefixed("n", 8),
            Some(("http://id.loc.gov/authorities/names/", "")),
        ),
        ext(213, "ISNI", Isni, None),
        ext(
            268,
            "Bibliothèque nationale de France ID",
            Alnum(9, 9),
            Some(("http://data.bnf.fr/ark:/12148/cb", "#about")),
        ),
        ext(269, "IdRef ID", Digits(8, 9), Some(("http://www.idref.fr/", "/id"))),
        ext(646, "Freebase ID", Freebase, Some(("http://g.co/kg", ""))),
        ext(356, "DOI", Doi, Some(("http://dx.doi.org/", ""))),
        ext(698, "PubMed ID", Digits(7, 8), Some(("http://rdf.ncbi.nlm.nih.gov/pubchem/reference/", ""))),
        ext(932, "PMCID", Digits(6, 7), None),
        ext(1566, "GeoNames ID", Digits(6, 8), Some(("http://sws.geonames.org/", "/"))),
        ext(685, "NCBI taxonomy ID", Digits(3, 7), Some(("http://purl.uniprot.org/taxonomy/", ""))),
        ext(846, "GBIF taxon ID", Digits(5, 8), Some(("http://www.gbif.org/species/", ""))),
        ext(830, "Encyclopedia of Life ID", Digits(5, 8), None),
        ext(345, "IMDb ID", Prefixed("nm", 7), None),
        ext(434, "MusicBrainz artist ID", Uuid, Some(("http://musicbrainz.org/artist/", ""))),
        ext(
            1006,
            "Nationale Thesaurus voor Auteursnamen ID",
            Digits(9, 9),
            Some(("http://data.bibliotheken.nl/id/thes/p", "")),
        ),
        ext(950, "Biblioteca Nacional de España ID", Prefixed("XX", 7), Some(("http://datos.bne.es/resource/", ""))),
        ext(2163, "FAST ID", Digits(5, 7), Some(("http://id.worldcat.org/fast/", ""))),
        ext(5275, "OED Online ID", Digits(5, 6), None),
        ext(1417, "Encyclopædia Britannica Online ID", Path, None),
        ext(4342, "Store norske leksikon ID", Slug, None),
    ]
}

/// The long tail of external-identifier properties, from a fixed seed.
fn add_long_tail(v: &mut Vec<Prop>) {
    use DType::*;
    use IdShape::*;
    // The long tail: external identifiers of every shape, a third with a formatter for their
    // normalized IRI.
    let mut rng = Rng::new(0x005E_ED0F_9709, 0);
    let shapes = [Digits(3, 10), Alnum(5, 14), Slug, Uuid, Path, Prefixed("a", 9), Prefixed("Q", 6)];
    let tlds = ["org", "com", "net", "de", "fr", "gov", "edu", "nl", "ac.uk", "info"];
    let mut next = 6000;
    for _ in 0..320 {
        next += rng.range(3, 30) as u32;
        let a = WORDS[rng.below(WORDS.len() as u64) as usize];
        let b = WORDS[rng.below(WORDS.len() as u64) as usize];
        let shape = shapes[rng.below(shapes.len() as u64) as usize];
        let formatter = if rng.pct(35) {
            let host = format!("https://{a}{b}.{}", tlds[rng.below(tlds.len() as u64) as usize]);
            Some(match rng.below(3) {
                0 => (format!("{host}/id/"), String::new()),
                1 => (format!("{host}/{a}/"), String::new()),
                _ => (format!("{host}/entity/"), "#this".to_string()),
            })
        } else {
            None
        };
        let label = format!("{}{} {b} ID", a[..1].to_uppercase(), &a[1..]);
        v.push(Prop { id: next, dtype: ExternalId, label, formatter, shape });
    }
}

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

/// RDF syntaxes the loader reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Syntax {
    NTriples,
    NQuads,
    Turtle,
    TriG,
    RdfXml,
}

/// Compression formats, recognised by their magic bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Compression {
    None,
    Gzip,
    Bzip2,
    Zstd,
    Xz,
    /// The legacy `.lzma` format (LZMA_Alone).
    Lzma,
}

impl Syntax {
    pub fn name(self) -> &'static str {
        match self {
            Syntax::NTriples => "n-triples",
            Syntax::NQuads => "n-quads",
            Syntax::Turtle => "turtle",
            Syntax::TriG => "trig",
            Syntax::RdfXml => "rdf/xml",
        }
    }
    /// How a file of this syntax is cut for parallel parsing, and so which parser entry
    /// reads it.
    pub fn split(self) -> Split {
        match self {
            Syntax::NTriples | Syntax::NQuads => Split::Lines,
            Syntax::Turtle | Syntax::TriG => Split::Statements,
            Syntax::RdfXml => Split::Whole(DocumentSyntax::RdfXml),
        }
    }
    /// Statements may name a graph. A file of such a syntax keeps its default-graph
    /// statements apart (encode.rs's `DEFAULT_GRAPH_NODE`) and is reported as quads; within
    /// a split kind it is what tells the parsers apart (N-Quads is N-Triples with a graph
    /// term, TriG is Turtle with graph blocks).
    pub fn has_graphs(self) -> bool {
        match self {
            Syntax::NQuads | Syntax::TriG => true,
            Syntax::NTriples | Syntax::Turtle | Syntax::RdfXml => false,
        }
    }
    /// How the blank-node labels a parse of this syntax gives behave.
    pub fn blank_labels(self) -> BlankLabels {
        match self {
            Syntax::NTriples | Syntax::NQuads | Syntax::Turtle | Syntax::TriG => BlankLabels::Stable,
            Syntax::RdfXml => BlankLabels::FirstSeen,
        }
    }
}

/// How a file is cut for parallel parsing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Split {
    /// Every line is a statement (N-Triples, N-Quads): cut at newlines, each chunk parsed by
    /// `parse_line_chunk`.
    Lines,
    /// Statements span lines and directives carry state (Turtle, TriG): cut between
    /// statements by the `TerseSplitter`, each chunk parsed by `parse_chunk`; a file parsed
    /// whole goes through `parse_terse`.
    Statements,
    /// One document that only its own parser can cut (RDF/XML): parsed whole, by
    /// `parse_document`.
    Whole(DocumentSyntax),
}

/// The syntaxes parsed whole, each by its own parser (see `parse_document`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DocumentSyntax {
    RdfXml,
}

/// How the blank-node labels a parse gives behave, and so how the loader makes them
/// deterministic (the pipeline's `BlankScope`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlankLabels {
    /// The same however the file is cut: as written (N-Triples, N-Quads), or named after
    /// their place in the file for the nodes the parser invents (Turtle, TriG: terse.rs).
    /// They are hashed as they are.
    Stable,
    /// The parser invents labels in the order it meets the nodes (RDF/XML): they mean
    /// something only within one sequential parse, so every label is renumbered in order of
    /// first appearance.
    FirstSeen,
}

impl Compression {
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Bzip2 => "bzip2",
            Compression::Zstd => "zstd",
            Compression::Xz => "xz",
            Compression::Lzma => "lzma",
        }
    }
}

/// One input file as detected before loading.
#[derive(Clone, Debug)]
pub struct InputFile {
    pub path: PathBuf,
    pub syntax: Syntax,
    pub compression: Compression,
    /// Size on disk (compressed bytes).
    pub size: u64,
}

fn compression_from_magic(head: &[u8]) -> Compression {
    match head {
        [0x1f, 0x8b, ..] => Compression::Gzip,
        [b'B', b'Z', b'h', ..] => Compression::Bzip2,
        [0x28, 0xb5, 0x2f, 0xfd, ..] => Compression::Zstd,
        [0xfd, b'7', b'z', b'X', b'Z', 0x00, ..] => Compression::Xz,
        _ if is_lzma_alone_header(head) => Compression::Lzma,
        _ => Compression::None,
    }
}

/// LZMA_Alone has no magic number: its 13-byte header is recognised by the checks liblzma's
/// own format detection makes (valid properties byte, a dictionary size of 2^n or 2^n+2^(n-1),
/// an uncompressed size unknown or below 256 GiB). Text never passes them: the dictionary
/// size would need NUL bytes.
fn is_lzma_alone_header(head: &[u8]) -> bool {
    if head.len() < 13 || head[0] > (4 * 5 + 4) * 9 + 8 {
        return false;
    }
    let dict = u32::from_le_bytes([head[1], head[2], head[3], head[4]]);
    let size = u64::from_le_bytes(head[5..13].try_into().expect("8 bytes"));
    let pow2 = dict.count_ones() == 1 || dict.count_ones() == 2 && dict & (dict >> 1) != 0;
    (pow2 || dict == u32::MAX) && (size == u64::MAX || size < 1 << 38)
}

fn syntax_from_name(name: &str) -> Option<Syntax> {
    let lower = name.to_ascii_lowercase();
    let mut stem = lower.as_str();
    for ext in [".gz", ".gzip", ".bz2", ".zst", ".zstd", ".xz", ".lzma"] {
        if let Some(s) = stem.strip_suffix(ext) {
            stem = s;
            break;
        }
    }
    let ext = stem.rsplit('.').next()?;
    Some(match ext {
        "nt" | "ntriples" => Syntax::NTriples,
        "nq" | "nquads" => Syntax::NQuads,
        "ttl" | "turtle" => Syntax::Turtle,
        "trig" => Syntax::TriG,
        // Jena's file extensions for RDF/XML.
        "rdf" | "owl" | "xml" => Syntax::RdfXml,
        _ => return None,
    })
}

/// Guesses the syntax from the first decompressed bytes: Turtle/TriG directives or
/// abbreviations mean a terse syntax (TriG, a superset of Turtle, when a `{` appears);
/// otherwise line-based (N-Quads, a superset of N-Triples). XML is recognised first.
fn syntax_from_content(head: &[u8]) -> Syntax {
    if looks_like_xml(head) {
        return Syntax::RdfXml;
    }
    let text = String::from_utf8_lossy(head);
    let mut terse = false;
    let mut braces = false;
    for line in text.lines().take(200) {
        let l = line.trim_start();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let lower = l.to_ascii_lowercase();
        if l.starts_with('@')
            || lower.starts_with("prefix ")
            || lower.starts_with("base ")
            || l.contains(';')
            || l.starts_with('[')
        {
            terse = true;
        }
        if l.contains('{') && !l.starts_with('<') && !l.starts_with("_:") || l.starts_with('{') {
            braces = true;
        }
    }
    match (terse || braces, braces) {
        (true, true) => Syntax::TriG,
        (true, false) => Syntax::Turtle,
        _ => Syntax::NQuads,
    }
}

/// An XML document starts (after a byte-order mark and blanks) with a declaration, comment or
/// DOCTYPE, or with a start tag; a tag, unlike an N-Triples IRI `<...>`, has a blank, `=` or
/// `"` before its `>`, ends `/>`, or is closed on another line.
fn looks_like_xml(head: &[u8]) -> bool {
    let head = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head);
    let start = head.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(head.len());
    let rest = &head[start..];
    if rest.starts_with(b"<?xml") || rest.starts_with(b"<!--") || rest.starts_with(b"<!DOCTYPE") {
        return true;
    }
    if rest.len() < 2 || rest[0] != b'<' || !(rest[1].is_ascii_alphabetic() || rest[1] == b'_') {
        return false;
    }
    match rest.iter().position(|&b| b == b'>') {
        Some(end) => {
            rest[end - 1] == b'/' || rest[1..end].iter().any(|&b| b.is_ascii_whitespace() || b == b'=' || b == b'"')
        }
        None => true,
    }
}

/// Detects compression (by content, whatever the name says) and syntax (by name, else by
/// content).
pub fn detect(path: &Path) -> io::Result<InputFile> {
    let mut f = File::open(path)?;
    let size = f.metadata()?.len();
    let mut head = [0u8; 16];
    let n = read_up_to(&mut f, &mut head)?;
    let compression = compression_from_magic(&head[..n]);
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let syntax = match syntax_from_name(&name) {
        Some(s) => s,
        None => {
            let mut r = open_decompressed(path, compression)?;
            let mut buf = vec![0u8; 64 * 1024];
            let n = read_up_to(&mut r, &mut buf)?;
            syntax_from_content(&buf[..n])
        }
    };
    Ok(InputFile { path: path.to_path_buf(), syntax, compression, size })
}

/// Reads until `buf` is full or the input ends; the bytes read.
pub(crate) fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// The most memory the xz/lzma decoder may take (its dictionary, mostly).
const XZ_MEMORY_LIMIT: u64 = 1 << 30;

/// Opens a file through its decompressor (see [`decompress`]).
pub fn open_decompressed(path: &Path, compression: Compression) -> io::Result<Box<dyn Read + Send>> {
    decompress(BufReader::with_capacity(1 << 20, File::open(path)?), compression)
}

/// The decompressed bytes of `raw`; multi-member gzip and multi-stream bzip2/zstd/xz are read
/// to the end. A stream cut short is an error (`UnexpectedEof`), not a short read.
pub fn decompress(raw: impl BufRead + Send + 'static, compression: Compression) -> io::Result<Box<dyn Read + Send>> {
    Ok(match compression {
        Compression::None => Box::new(raw),
        Compression::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(raw)),
        // Our block decoder (bzip2_block) on one thread beside the block splitter: faster than
        // libbzip2's sequential one.
        Compression::Bzip2 => Box::new(crate::parallel_bzip2::ParallelBzDecoder::new(raw, 1)),
        Compression::Zstd => Box::new(zstd::stream::read::Decoder::with_buffer(raw)?),
        // liblzma's automatic decoder reads both .xz (every concatenated stream) and .lzma. Its
        // memory limit stops a damaged header from claiming a 4 GiB dictionary (xz -9 needs
        // 65 MiB): such a file is an error, not an out-of-memory kill.
        Compression::Xz | Compression::Lzma => {
            let stream = liblzma::stream::Stream::new_auto_decoder(XZ_MEMORY_LIMIT, liblzma::stream::CONCATENATED)
                .map_err(io::Error::other)?;
            Box::new(liblzma::bufread::XzDecoder::new_stream(raw, stream))
        }
    })
}

/// [`decompress`] with `threads` cores for formats that decode in parallel (bzip2's blocks).
pub fn decompress_threads(
    raw: impl BufRead + Send + 'static,
    compression: Compression,
    threads: usize,
) -> io::Result<Box<dyn Read + Send>> {
    match compression {
        Compression::Bzip2 => Ok(Box::new(crate::parallel_bzip2::ParallelBzDecoder::new(raw, threads))),
        _ => decompress(raw, compression),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_decide_syntax_and_magic_decides_compression() {
        assert_eq!(syntax_from_name("a.nt.gz"), Some(Syntax::NTriples));
        assert_eq!(syntax_from_name("A.NQ.BZ2"), Some(Syntax::NQuads));
        assert_eq!(syntax_from_name("x.ttl.zst"), Some(Syntax::Turtle));
        assert_eq!(syntax_from_name("x.trig"), Some(Syntax::TriG));
        assert_eq!(syntax_from_name("dump.gz"), None);
        assert_eq!(compression_from_magic(&[0x1f, 0x8b, 8, 0]), Compression::Gzip);
        assert_eq!(compression_from_magic(b"BZh9"), Compression::Bzip2);
        assert_eq!(compression_from_magic(&[0x28, 0xb5, 0x2f, 0xfd]), Compression::Zstd);
        assert_eq!(compression_from_magic(b"<htt"), Compression::None);
        assert_eq!(compression_from_magic(&[0xfd, b'7', b'z', b'X', b'Z', 0, 0, 4]), Compression::Xz);
        let lzma_alone = [0x5d, 0, 0, 0x80, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0];
        assert_eq!(compression_from_magic(&lzma_alone), Compression::Lzma);
        let mut odd_dict = lzma_alone;
        odd_dict[3] = 0x81;
        assert_eq!(compression_from_magic(&odd_dict), Compression::None);
        assert_eq!(compression_from_magic(b"<http://a/b> <h"), Compression::None);
        assert_eq!(compression_from_magic(b"]\0\0\0\x01text......"), Compression::None);
        assert_eq!(syntax_from_name("dump.nt.xz"), Some(Syntax::NTriples));
        assert_eq!(syntax_from_name("uniprot.rdf.xz"), Some(Syntax::RdfXml));
        assert_eq!(syntax_from_name("pizza.OWL"), Some(Syntax::RdfXml));
        assert_eq!(syntax_from_name("x.xml.lzma"), Some(Syntax::RdfXml));
    }

    #[test]
    fn xz_streams_concatenated_lzma_and_damage() {
        use std::io::Write;
        let enc = |data: &[u8], stream: liblzma::stream::Stream| {
            let mut e = liblzma::write::XzEncoder::new_stream(Vec::new(), stream);
            e.write_all(data).unwrap();
            e.finish().unwrap()
        };
        let xz = |data: &[u8]| {
            enc(data, liblzma::stream::Stream::new_easy_encoder(1, liblzma::stream::Check::Crc64).unwrap())
        };
        let read = |bytes: Vec<u8>, c| {
            let mut out = Vec::new();
            decompress(io::Cursor::new(bytes), c)?.read_to_end(&mut out).map(|_| out)
        };
        let mut two = xz(b"<a> <b> <c> .\n");
        two.extend(xz(b"<d> <e> <f> .\n"));
        assert_eq!(compression_from_magic(&two), Compression::Xz);
        assert_eq!(read(two.clone(), Compression::Xz).unwrap(), b"<a> <b> <c> .\n<d> <e> <f> .\n");
        let opts = liblzma::stream::LzmaOptions::new_preset(1).unwrap();
        let alone = enc(b"<a> <b> <c> .\n", liblzma::stream::Stream::new_lzma_encoder(&opts).unwrap());
        assert_eq!(compression_from_magic(&alone), Compression::Lzma);
        assert_eq!(read(alone.clone(), Compression::Lzma).unwrap(), b"<a> <b> <c> .\n");
        for damaged in [two[..two.len() - 5].to_vec(), alone[..alone.len() - 3].to_vec()] {
            assert!(read(damaged, Compression::Xz).is_err());
        }
        // A header claiming a 4 GiB dictionary is refused, not allocated.
        let mut huge = alone.clone();
        huge[1..5].copy_from_slice(&[0xff; 4]);
        assert!(read(huge, Compression::Lzma).is_err());
    }

    #[test]
    fn capabilities_of_each_syntax() {
        use BlankLabels::{FirstSeen, Stable};
        let all = [Syntax::NTriples, Syntax::NQuads, Syntax::Turtle, Syntax::TriG, Syntax::RdfXml];
        let caps: Vec<_> = all.iter().map(|s| (s.split(), s.has_graphs(), s.blank_labels())).collect();
        assert_eq!(
            caps,
            [
                (Split::Lines, false, Stable),
                (Split::Lines, true, Stable),
                (Split::Statements, false, Stable),
                (Split::Statements, true, Stable),
                (Split::Whole(DocumentSyntax::RdfXml), false, FirstSeen),
            ]
        );
    }

    #[test]
    fn content_sniffing() {
        assert_eq!(syntax_from_content(b"<a> <b> <c> .\n<a> <b> <c> <g> .\n"), Syntax::NQuads);
        assert_eq!(syntax_from_content(b"@prefix ex: <http://e/> .\nex:a ex:b ex:c ;\n ex:d 1 .\n"), Syntax::Turtle);
        assert_eq!(syntax_from_content(b"PREFIX ex: <http://e/>\nex:g { ex:a ex:b ex:c }\n"), Syntax::TriG);
        assert_eq!(syntax_from_content(b"\xef\xbb\xbf<?xml version=\"1.0\"?>\n<rdf:RDF/>"), Syntax::RdfXml);
        assert_eq!(
            syntax_from_content(b"\n <rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\">"),
            Syntax::RdfXml
        );
        assert_eq!(syntax_from_content(b"<!-- made by hand -->\n<rdf:RDF>"), Syntax::RdfXml);
        assert_eq!(syntax_from_content(b"<rdf:RDF\n  xmlns:rdf=\"x\">"), Syntax::RdfXml);
        assert_eq!(syntax_from_content(b"<http://a/b> <http://a/c> <http://a/d> .\n"), Syntax::NQuads);
        assert_eq!(syntax_from_content(b"<a:b> <a:c> \"x\" .\n"), Syntax::NQuads);
    }
}

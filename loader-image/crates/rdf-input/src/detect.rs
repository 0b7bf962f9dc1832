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
}

/// Compression formats, recognised by their magic bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Compression {
    None,
    Gzip,
    Bzip2,
    Zstd,
}

impl Syntax {
    pub fn name(self) -> &'static str {
        match self {
            Syntax::NTriples => "n-triples",
            Syntax::NQuads => "n-quads",
            Syntax::Turtle => "turtle",
            Syntax::TriG => "trig",
        }
    }
    /// Line-based syntaxes can be cut at newlines and parsed in parallel.
    pub fn is_line_based(self) -> bool {
        matches!(self, Syntax::NTriples | Syntax::NQuads)
    }
}

impl Compression {
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Bzip2 => "bzip2",
            Compression::Zstd => "zstd",
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
        _ => Compression::None,
    }
}

fn syntax_from_name(name: &str) -> Option<Syntax> {
    let lower = name.to_ascii_lowercase();
    let mut stem = lower.as_str();
    for ext in [".gz", ".gzip", ".bz2", ".zst", ".zstd"] {
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
        _ => return None,
    })
}

/// Guesses the syntax from the first decompressed bytes: Turtle/TriG directives or
/// abbreviations mean a terse syntax (TriG, a superset of Turtle, when a `{` appears);
/// otherwise line-based (N-Quads, a superset of N-Triples).
fn syntax_from_content(head: &[u8]) -> Syntax {
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

/// Detects compression (by content, whatever the name says) and syntax (by name, else by
/// content).
pub fn detect(path: &Path) -> io::Result<InputFile> {
    let mut f = File::open(path)?;
    let size = f.metadata()?.len();
    let mut head = [0u8; 4];
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

fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
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

/// Opens a file through its decompressor (see [`decompress`]).
pub fn open_decompressed(path: &Path, compression: Compression) -> io::Result<Box<dyn Read + Send>> {
    decompress(BufReader::with_capacity(1 << 20, File::open(path)?), compression)
}

/// The decompressed bytes of `raw`; multi-member gzip and multi-stream bzip2/zstd are read
/// to the end.
pub fn decompress(raw: impl BufRead + Send + 'static, compression: Compression) -> io::Result<Box<dyn Read + Send>> {
    Ok(match compression {
        Compression::None => Box::new(raw),
        Compression::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(raw)),
        Compression::Bzip2 => Box::new(bzip2::bufread::MultiBzDecoder::new(raw)),
        Compression::Zstd => Box::new(zstd::stream::read::Decoder::with_buffer(raw)?),
    })
}

/// [`decompress`] with `threads` cores for formats that decode in parallel (bzip2's blocks).
pub fn decompress_threads(
    raw: impl BufRead + Send + 'static,
    compression: Compression,
    threads: usize,
) -> io::Result<Box<dyn Read + Send>> {
    match compression {
        Compression::Bzip2 if threads > 1 => Ok(Box::new(crate::parallel_bzip2::ParallelBzDecoder::new(raw, threads))),
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
    }

    #[test]
    fn content_sniffing() {
        assert_eq!(syntax_from_content(b"<a> <b> <c> .\n<a> <b> <c> <g> .\n"), Syntax::NQuads);
        assert_eq!(syntax_from_content(b"@prefix ex: <http://e/> .\nex:a ex:b ex:c ;\n ex:d 1 .\n"), Syntax::Turtle);
        assert_eq!(syntax_from_content(b"PREFIX ex: <http://e/>\nex:g { ex:a ex:b ex:c }\n"), Syntax::TriG);
    }
}
